import type { ComponentChildren } from 'preact';
import { dataOf, useLoad, type Api } from '../../api.ts';
import { href } from '../../router.ts';
import { Page, Tabs } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading } from '../../ui/status.tsx';

/** An agent as `GET /agent/{agentId}` answers it. */
export type Agent = Awaited<ReturnType<typeof loadAgent>>;

export function loadAgent(api: Api, agentId: string) {
  return dataOf(api.client.GET('/agent/{agentId}', { params: { path: { agentId } } }));
}

/** What an agent's type is called on screen. */
export function typeLabel(agentType: 'text' | 'bidi'): string {
  return agentType === 'bidi' ? 'voice' : 'text';
}

export type AgentTab = 'edit' | 'chat' | 'conversations';

/**
 * One agent's pages: its name as the page title, the tabs (edit, chat or test call, conversations),
 * then the tab. The agent is loaded once here and handed to the tab.
 */
export function AgentFrame(props: { agentId: string; tab: AgentTab; children: (agent: Agent, reload: () => void) => ComponentChildren }) {
  const agent = useLoad((api) => loadAgent(api, props.agentId), [props.agentId]);
  if (agent.data === undefined || agent.data.agentId !== props.agentId)
    return (
      <Page title={agent.error === undefined ? 'Agent' : 'Agent not available'} actions={<a href={href('agents')}>All agents</a>}>
        {agent.error === undefined ? <Loading what="the agent" /> : <ErrorNote error={agent.error} />}
      </Page>
    );
  const data = agent.data;
  const voice = data.agentType === 'bidi';
  return (
    <Page
      title={data.agentName}
      actions={<a href={href('agents')}>All agents</a>}
      lead={
        <>
          <Badge tone="neutral">{typeLabel(data.agentType)}</Badge> <Badge tone={data.visibility === 'public' ? 'warn' : 'neutral'}>{data.visibility}</Badge>{' '}
          {data.status === 'deleted' ? <Badge tone="bad">deleted</Badge> : null} {data.description}
        </>
      }
    >
      <Tabs
        label="Agent"
        tabs={[
          { href: href('agents', data.agentId), label: 'Edit', current: props.tab === 'edit' },
          { href: href('agents', data.agentId, 'chat'), label: voice ? 'Test call' : 'Chat', current: props.tab === 'chat' },
          { href: href('agents', data.agentId, 'conversations'), label: 'Conversations', current: props.tab === 'conversations' },
        ]}
      />
      {props.children(data, agent.reload)}
    </Page>
  );
}

/** A text agent that runs as written: plain Python with the Strands interface (see docs/guide.md). */
export const TEXT_TEMPLATE = `"""A text agent: create_agent() returns (agent, mcp_clients).

The platform keeps the conversation in agent.messages and streams
agent.stream_async(prompt): {"data": ...} events are text, {"current_tool_use": {...}}
marks a tool, {"result": ...} ends. Swap in a Strands Agent with a model (see the
guide) once it works.
"""


class EchoAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        reply = "echo: " + prompt
        for i, word in enumerate(reply.split(" ")):
            yield {"data": word if i == 0 else " " + word}


def create_agent():
    return EchoAgent(), []
`;

/** A voice agent that runs as written: it echoes what it hears and answers typed text. */
export const VOICE_TEMPLATE = `"""A voice agent: create_bidi_agent() returns an object with start, send, receive
and stop (Strands' BidiAgent interface). Caller audio arrives as base64 PCM16 at
16 kHz; audio sent back may be any rate. Swap in BidiAgent with a model (see the
guide) once it works.
"""

from asyncio import Queue


class EchoVoiceAgent:
    def __init__(self):
        self.events = Queue()
        self.running = False

    async def start(self):
        self.running = True

    async def send(self, message):
        if isinstance(message, str):
            await self.say("user", message)
            await self.say("assistant", "echo: " + message)
            return
        await self.events.put({"type": "bidi_audio_stream",
                               "audio": message["audio"],
                               "sample_rate": message["sample_rate"]})

    async def say(self, role, text):
        await self.events.put({"type": "bidi_transcript_stream",
                               "role": role, "text": text, "is_final": True})

    async def receive(self):
        while self.running:
            event = await self.events.get()
            if event is None:
                return
            yield event

    async def stop(self):
        self.running = False
        await self.events.put(None)


def create_bidi_agent():
    return EchoVoiceAgent()
`;
