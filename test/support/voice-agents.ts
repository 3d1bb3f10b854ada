/** The parts of an inline voice agent that differ; each is Python, indented as if at the left margin. */
export interface VoiceAgentParts {
  /** Module code before the class: imports and helpers. */
  readonly preamble?: string;
  /** More of `__init__`, after `self.events = Queue()`. */
  readonly init?: string;
  /** The body of `async def start(self)`. */
  readonly start?: string;
  /** The body of `async def send(self, message)`: the caller's audio (bytes) or text. */
  readonly send?: string;
}

/**
 * The Python source of a voice agent with Strands' bidi interface, in plain Python within what the
 * checker allows: whatever it puts on `self.events` reaches the caller, and `stop` ends `receive`.
 */
export function voiceAgentSource(parts: VoiceAgentParts): string {
  return `from asyncio import Queue
${dedent(parts.preamble ?? '')}

class Agent:
    def __init__(self):
        self.events = Queue()
${indent(parts.init ?? '', 8)}

    async def start(self):
${indent(parts.start ?? 'pass', 8)}

    async def send(self, message):
${indent(parts.send ?? 'pass', 8)}

    async def receive(self):
        while True:
            event = await self.events.get()
            if event is None:
                return
            yield event

    async def stop(self):
        await self.events.put(None)

def create_bidi_agent():
    return Agent()
`;
}

/** The lines without the indentation they share, and without blank lines around them. */
function dedent(code: string): string {
  const lines = code.replace(/^\s*\n|\n\s*$/g, '').split('\n');
  const margin = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
  return lines.map((line) => line.slice(Number.isFinite(margin) ? margin : 0)).join('\n');
}

function indent(code: string, spaces: number): string {
  const body = dedent(code);
  return body === ''
    ? ''
    : body
        .split('\n')
        .map((line) => (line.trim() === '' ? '' : ' '.repeat(spaces) + line))
        .join('\n');
}

/**
 * A voice agent as users write it with the real Strands SDK (it needs an interpreter with Strands):
 * `BidiAgent` with a `@tool`. The model is a deterministic bidi model written in the agent source,
 * a `BidiModel` (the SDK's protocol: start, send, receive, stop) emitting the SDK's own event
 * classes, so the agent loop, the tool registry and executor and the history are the SDK's.
 * It speaks 100 ms of a 24 kHz tone of value 1000 with each answer, says what it heard of the
 * caller's audio, asks for `lookup_weather` when asked about the weather and answers with its
 * result, and answers other text with what it was told and how many messages the history held.
 */
export const STRANDS_VOICE_AGENT = `import base64
from asyncio import Queue

from strands import tool
from strands.experimental.bidi import (BidiAgent, BidiAudioStreamEvent, BidiConnectionStartEvent,
                                       BidiModel, BidiResponseCompleteEvent, BidiTranscriptStreamEvent,
                                       BidiUsageEvent, ToolUseStreamEvent)


@tool
def lookup_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny in " + city


class ScriptedSpeech(BidiModel):
    def __init__(self):
        self.config = {}
        self.events = Queue()
        self.tools = []
        self.history = []

    async def start(self, system_prompt=None, tools=None, messages=None, **kwargs):
        self.tools = [spec["name"] for spec in tools or []]
        self.history = messages if messages is not None else []
        await self.events.put(BidiConnectionStartEvent(connection_id="scripted-1", model="scripted"))

    async def stop(self):
        await self.events.put(None)

    async def receive(self):
        while True:
            event = await self.events.get()
            if event is None:
                return
            yield event

    async def say(self, text):
        tone = (1000).to_bytes(2, "little", signed=True) * 2400
        await self.events.put(BidiAudioStreamEvent(audio=base64.b64encode(tone).decode(), format="pcm",
                                                   sample_rate=24000, channels=1))
        await self.events.put(BidiTranscriptStreamEvent(delta={"text": text}, text=text, role="assistant",
                                                        is_final=True, current_transcript=text))
        await self.events.put(BidiUsageEvent(input_tokens=3, output_tokens=4, total_tokens=7))
        await self.events.put(BidiResponseCompleteEvent(response_id="r1", stop_reason="complete"))

    async def send(self, content):
        kind = content["type"]
        if kind == "bidi_text_input" and "weather" in content["text"] and "lookup_weather" in self.tools:
            use = {"toolUseId": "call-1", "name": "lookup_weather", "input": {"city": "Paris"}}
            await self.events.put(ToolUseStreamEvent(delta={"toolUse": use}, current_tool_use=use))
        elif kind == "bidi_text_input":
            await self.say("you said: " + content["text"] + " (" + str(len(self.history)) + " messages)")
        elif kind == "bidi_audio_input":
            heard = len(base64.b64decode(content["audio"]))
            await self.events.put(BidiTranscriptStreamEvent(delta={"text": "..."}, text="heard " + str(heard) + " bytes",
                                                            role="user", is_final=True))
        elif kind == "tool_result":
            result = content["tool_result"]
            await self.say("the weather: " + result["content"][0]["text"])


def create_bidi_agent():
    return BidiAgent(model=ScriptedSpeech(), tools=[lookup_weather], system_prompt="Answer briefly.")
`;
