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
