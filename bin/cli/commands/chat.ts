import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { expectArgs, type Context } from '../args.ts';
import { CliError } from '../errors.ts';
import { dataOrFail, platformClient, streamOrFail, type Connection } from '../http.ts';
import { dimError, printJson } from '../output.ts';
import { findOwnByName } from './resources.ts';

/** The platform's own reply can take as long as an agent may run (880 s) plus the stream's overhead. */
const STREAM_TIMEOUT_MS = 900_000;
const AGENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Reply {
  conversationId: string | null;
  agentId: string | null;
  text: string;
  tools: string[];
  error: { code: string; message: string } | null;
  metrics: Record<string, unknown> | null;
}

/**
 * `chat <agent> "prompt"`: the SSE form of the streaming chat route, on the stream host that the
 * discovery document names. Text goes to stdout as it arrives; the conversation id and tool starts
 * go to stderr, so `> reply.txt` keeps only the reply.
 */
export async function chat(context: Context): Promise<number> {
  const [agent, prompt] = expectArgs(context, 2, 2, 'chat needs an agent and a prompt: chat <agent> "prompt".');
  const connection = await context.connect();
  const agentId = await resolveAgent(connection, agent!);
  const { streamUrl } = await dataOrFail(connection.api.GET('/.well-known/platform.json'));
  const stream = platformClient(connection, { baseUrl: streamUrl, timeoutMs: STREAM_TIMEOUT_MS, streamed: true });
  // Refusals before the stream starts (no access, no credits, rate limit) are ordinary JSON errors.
  const response = await streamOrFail(
    stream.POST('/agent/{agentId}/chat', {
      params: { path: { agentId } },
      body: { prompt: prompt!, conversationId: context.values.conversation },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
    }),
  );
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
    throw new CliError(`The platform at ${connection.url} did not answer with an event stream; is it older than this CLI?`);
  }

  const reply = await readReply(response.body, !context.output.json);
  if (context.output.json) printJson(reply);
  else if (reply.text !== '' && !reply.text.endsWith('\n')) process.stdout.write('\n');
  if (reply.error !== null) throw new CliError(`Error: ${reply.error.message} (${reply.error.code})`);
  return 0;
}

/** An agent id as is; `owner/name` through the slug route; a bare name among the caller's agents. */
async function resolveAgent(connection: Connection, agent: string): Promise<string> {
  if (AGENT_ID.test(agent)) return agent;
  if (agent.includes('/')) {
    const [owner = '', slug = ''] = agent.split('/', 2);
    const found = await dataOrFail(connection.api.GET('/agent/s/{owner}/{slug}', { params: { path: { owner, slug } } }));
    return found.agentId;
  }
  const own = await findOwnByName(connection, 'agents', agent);
  if (own === undefined) throw new CliError(`You have no agent named "${agent}"; name someone else's as owner/name, or pass its id.`);
  return own.id;
}

async function readReply(body: ReadableStream<Uint8Array>, live: boolean): Promise<Reply> {
  const reply: Reply = { conversationId: null, agentId: null, text: '', tools: [], error: null, metrics: null };
  const terminal: Terminal = { lineOpen: false };
  const parser = createParser({ onEvent: (event) => onEvent(reply, event, live ? terminal : undefined) });
  const decoder = new TextDecoder();
  for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return reply;
}

/** Whether the reply's last line on stdout is unfinished: a note on stderr then starts on a line of its own. */
interface Terminal {
  lineOpen: boolean;
}

/** Records the event in `reply`; prints it as it comes when `live` (not --json). */
function onEvent(reply: Reply, event: EventSourceMessage, live: Terminal | undefined): void {
  const data = JSON.parse(event.data) as Record<string, unknown>;
  switch (event.event) {
    case 'meta':
      reply.conversationId = typeof data['conversationId'] === 'string' ? data['conversationId'] : null;
      reply.agentId = typeof data['agentId'] === 'string' ? data['agentId'] : null;
      if (live) process.stderr.write(dimError(`conversation ${reply.conversationId}\n`));
      break;
    case 'text': {
      const piece = typeof data['text'] === 'string' ? data['text'] : '';
      reply.text += piece;
      if (live && piece !== '') {
        process.stdout.write(piece);
        live.lineOpen = !piece.endsWith('\n');
      }
      break;
    }
    case 'tool': {
      const name = typeof data['name'] === 'string' ? data['name'] : '?';
      reply.tools.push(name);
      if (live) {
        process.stderr.write(dimError(`${live.lineOpen ? '\n' : ''}[tool ${name}]\n`));
        live.lineOpen = false;
      }
      break;
    }
    case 'error':
      reply.error = { code: String(data['code'] ?? 'ERROR'), message: String(data['message'] ?? 'The run failed.') };
      break;
    case 'metrics':
      reply.metrics = data;
      break;
    default:
      // Events a newer platform may add are skipped, as SSE clients do.
      break;
  }
}
