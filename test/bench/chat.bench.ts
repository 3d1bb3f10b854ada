import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request, type Server } from 'node:http';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import type { Ports } from '../../functions/ports.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { closeServer } from './http-load.ts';
import { admitPaidRun, startBareServer } from './same-calls.ts';
import { firstOf, invokeTimed, startRuntimeServer } from './runtime.bench.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';
import { attachTracer, describeStoreCalls, markOf, spanOf, type Trace } from './trace.ts';

/** The runtime's own plain-Python echo agent: streams the prompt back in a few `text` events. */
const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

const WARM_UP = 30;
const ROUNDS = 100;
const CONTINUED_ROUNDS = 30;
/** The chat routes allow 60 calls per user per minute: a new window (test clock) every this many rounds (<= 2 chats each). */
const ROUNDS_PER_WINDOW = 20;
const CHAT_WINDOW_MS = 60_000;
/** New conversations traced store call by store call, after the measured rounds (one rate-limit window). */
const TRACED = 20;

const DIRECT_TEXT = 'runtime /invoke, first text';
const DIRECT_END = 'runtime /invoke, end';
const CHAT_BYTE = 'chat, new conv, first byte';
const CHAT_TEXT = 'chat, new conv, first text';
const CHAT_END = 'chat, new conv, end';
const SAME_CALLS_END = 'bare http, same store calls + runtime /invoke, end';
const HISTORY_TEXT = 'runtime /invoke + history, first text';
const HISTORY_END = 'runtime /invoke + history, end';
const CONTINUED_BYTE = 'chat, continued conv, first byte';
const CONTINUED_TEXT = 'chat, continued conv, first text';
const CONTINUED_END = 'chat, continued conv, end';
const TO_INVOKE = 'chat, new conv: to compute.invoke';
const TO_RUNTIME_TEXT = 'chat, new conv: compute.invoke to its first event';
const AFTER_RUNTIME = 'chat, new conv: runtime end to body end';

interface ChatTiming {
  /** Request start to the first body chunk (the `__META__` marker, written before the agent runs). */
  readonly firstByte: number;
  /** Request start to the first chunk carrying agent text after the marker. */
  readonly firstText: number;
  /** Request start to the end of the body (after `__METRICS__`, i.e. after the platform's bookkeeping). */
  readonly end: number;
  readonly conversationId: string;
}

/** One streamed chat over keep-alive HTTP, timed chunk by chunk, checked for the echoed text. */
function chatOnce(agent: Agent, url: string, token: string, prompt: string, conversationId?: string): Promise<ChatTiming> {
  const body = JSON.stringify(conversationId === undefined ? { prompt } : { prompt, conversationId });
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    let text = '';
    let firstByte = Number.NaN;
    let firstText = Number.NaN;
    let metaLength = -1;
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = elapsedSince(startedAt);
          if (Number.isNaN(firstByte)) firstByte = at;
          text += chunk;
          if (metaLength < 0) metaLength = /^__META__\{.*?\}__/.exec(text)?.[0].length ?? -1;
          if (metaLength >= 0 && Number.isNaN(firstText) && text.length > metaLength) firstText = at;
        });
        res.on('end', () => {
          const end = elapsedSince(startedAt);
          const meta = /^__META__(\{.*?\})__/.exec(text)?.[1];
          // A fast error must not pass for a fast answer.
          if (
            res.statusCode !== 200 ||
            meta === undefined ||
            !text.includes(`echo: ${prompt}`) ||
            text.includes('__ERROR__') ||
            !text.includes('__METRICS__')
          ) {
            reject(new Error(`chat failed: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
            return;
          }
          resolve({ firstByte, firstText, end, conversationId: (JSON.parse(meta) as { conversationId: string }).conversationId });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * What a new conversation's store calls cost without the platform's kernel: a bare `node:http`
 * server in this process that makes the calls a new-conversation chat makes, in the same steps,
 * through the platform's own store code (`ports`), around the same direct runtime call as the
 * `runtime /invoke` rows, and answers the reply at the end. No routing, schema parsing, stream
 * markers, metering or error handling: the chat's time over this row is the platform's own cost;
 * this row's over `runtime /invoke` is the store's and one HTTP hop's.
 */
async function startSameCallsServer(
  ports: Ports,
  token: string,
  agentId: string,
  run: (prompt: string) => Promise<unknown>,
): Promise<{ server: Server; url: string }> {
  const admit = admitPaidRun(ports, token, () => ports.agents.get(agentId), 1);
  const answer = async (body: string): Promise<string> => {
    const { prompt } = JSON.parse(body) as { prompt: string };
    const startedAt = ports.clock.now();
    // auth > rate limit | agent > debit | keys > the run | ledger line > conversation | counter | usage record
    const { requestId, userId, record: agent, ledgerLine } = await admit();
    await Promise.all([run(prompt), ledgerLine]);
    const reply = `echo: ${prompt}`;
    const now = ports.clock.now();
    const conversationId = randomUUID();
    await Promise.all([
      ports.conversations.save(
        { conversationId, agentId, userId, userAgent: `${userId}#${agentId}`, title: prompt, messageCount: 2, createdAt: startedAt, updatedAt: now },
        [
          { role: 'user', content: prompt, timestamp: startedAt },
          { role: 'assistant', content: reply, timestamp: now },
        ],
        null,
      ),
      ports.agents.countInvocation(agentId, new Date(startedAt).toISOString().slice(0, 7)),
      ports.usageLogs.write({
        lineage: lineageOf(requestId, undefined),
        userId,
        resourceId: agentId,
        resourceType: 'agent',
        requestType: 'AGENT_CHAT',
        status: 'success',
        request: { prompt, conversationId },
        response: { text: reply },
        durationMs: now - startedAt,
        memoryMb: agent.memoryMb,
        creditsUsed: 1,
      }),
    ]);
    return reply;
  };
  return startBareServer(answer, 'text/plain; charset=utf-8');
}

/** One request to the same-calls server, timed to the end of its body and checked for the echo. */
function sameCallsOnce(agent: Agent, url: string, prompt: string): Promise<number> {
  const body = JSON.stringify({ prompt });
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        res.statusCode === 200 && text === `echo: ${prompt}`
          ? resolve(elapsedSince(startedAt))
          : reject(new Error(`same calls: ${res.statusCode} ${text.slice(0, 300)}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Starts a fresh rate-limit window (the test clock moves forward) and absorbs the token's
 * once-a-minute `lastUsedAt` write that the jump causes, so no measured chat pays for either.
 */
async function freshWindow(platform: TestPlatform, token: string): Promise<void> {
  platform.clock.alignToWindow(CHAT_WINDOW_MS);
  const info = await platform.api('GET', '/user/info', { token });
  if (info.status !== 200) throw new Error(`GET /user/info: ${info.status} ${info.text}`);
}

/**
 * Time to first byte, first text and end of a streamed chat through the local platform, next to
 * the same echo agent invoked directly on a runtime server started here: the difference is the
 * platform's share (auth, rate limit, agent and conversation reads, credit debit, keys, the local
 * adapter; then at the end conversation save, counters and usage log).
 */
export const chatBench: BenchModule = {
  name: 'chat',
  async run({ progress, defer }) {
    progress('chat: starting the platform and a runtime server');
    const [platform, server] = await Promise.all([startTestPlatform({ ...DEFAULT_SPARES }), startRuntimeServer()]);
    defer(() => platform.stop({ removeData: true }));
    defer(() => server.stop());
    const user = await createUser(platform, { alias: 'benchchat', credits: 1_000_000 });
    const created = await platform.api('POST', '/agent/create', {
      token: user.token,
      body: { agentName: 'bench-echo', description: 'echo agent for the chat bench', sourceCode: ECHO },
    });
    if (created.status !== 200) throw new Error(`creating the agent failed: ${created.status} ${created.text}`);
    const agentId = created.body.data.agentId as string;
    const config = platform.running.ports.config;
    const chatUrl = `${config.STREAM_URL ?? `${platform.url}/stream`}/agent/${agentId}/chat`;
    const httpAgent = new Agent({ keepAlive: true });
    defer(() => httpAgent.destroy());

    // What the platform sends for this agent (its defaults: 1024 MB, 300 s), minus the keys it has none of.
    const allowHosts = [...new Set(['*.amazonaws.com', ...[config.MCP_URL, config.BASE_URL].flatMap((url) => (url ? [new URL(url).host] : []))])];
    const directBody = (prompt: string, messages: unknown[]) =>
      JSON.stringify({
        kind: 'agent',
        source: ECHO,
        requestId: randomUUID(),
        functionName: 'bench-echo',
        timeoutMs: 300_000,
        memoryMb: 1024,
        env: { SVC_KEYS_JSON: '{}', AWS_REGION: config.AWS_REGION, SVC_AGENT_ID: agentId, SVC_CONVERSATION_ID: randomUUID() },
        allowHosts,
        prompt,
        messages,
      });
    const direct = async (prompt: string, messages: unknown[] = []) => {
      const { events, endMs } = await invokeTimed(httpAgent, server.port, directBody(prompt, messages));
      const reply = events
        .filter((e) => e.event.type === 'text')
        .map((e) => e.event['data'])
        .join('');
      const end = events.at(-1)?.event;
      if (reply !== `echo: ${prompt}` || events.some((e) => e.event.type === 'error') || end?.type !== 'end' || end['exitCode'] !== 0) {
        throw new Error(`direct run failed: ${JSON.stringify(events.map((e) => e.event)).slice(0, 300)}`);
      }
      return { firstText: firstOf(events, 'text').at, end: endMs };
    };

    const { server: sameCalls, url: sameCallsUrl } = await startSameCallsServer(platform.running.ports, user.token, agentId, (said) => direct(said));
    defer(() => closeServer(sameCalls));

    let sequence = 0;
    const prompt = () => `hello bench ${++sequence}`;
    progress('chat: warm-up');
    await freshWindow(platform, user.token);
    for (let i = 0; i < WARM_UP; i++) {
      await chatOnce(httpAgent, chatUrl, user.token, prompt());
      await direct(prompt());
      await sameCallsOnce(httpAgent, sameCallsUrl, prompt());
    }

    const samples = new Map<string, number[]>(
      [DIRECT_TEXT, DIRECT_END, SAME_CALLS_END, CHAT_BYTE, CHAT_TEXT, CHAT_END, HISTORY_TEXT, HISTORY_END, CONTINUED_BYTE, CONTINUED_TEXT, CONTINUED_END].map(
        (k) => [k, []],
      ),
    );
    const record = (key: string, ms: number) => samples.get(key)!.push(ms);

    const newConversation = async () => {
      const chat = await chatOnce(httpAgent, chatUrl, user.token, prompt());
      record(CHAT_BYTE, chat.firstByte);
      record(CHAT_TEXT, chat.firstText);
      record(CHAT_END, chat.end);
    };
    const directNew = async () => {
      const run = await direct(prompt());
      record(DIRECT_TEXT, run.firstText);
      record(DIRECT_END, run.end);
    };
    const sameCallsNew = async () => record(SAME_CALLS_END, await sameCallsOnce(httpAgent, sameCallsUrl, prompt()));
    // One conversation continued turn after turn: each such chat also reads (and rewrites) a growing
    // history. Its direct baseline gets the same history, so the runtime's share of it is on both sides.
    const opening = prompt();
    const { conversationId } = await chatOnce(httpAgent, chatUrl, user.token, opening);
    const history: { role: string; content: { text: string }[] }[] = [];
    const addTurn = (said: string) => history.push({ role: 'user', content: [{ text: said }] }, { role: 'assistant', content: [{ text: `echo: ${said}` }] });
    addTurn(opening);
    const continueConversation = async () => {
      const said = prompt();
      const chat = await chatOnce(httpAgent, chatUrl, user.token, said, conversationId);
      if (chat.conversationId !== conversationId) throw new Error(`continued chat opened ${chat.conversationId}, not ${conversationId}`);
      addTurn(said);
      record(CONTINUED_BYTE, chat.firstByte);
      record(CONTINUED_TEXT, chat.firstText);
      record(CONTINUED_END, chat.end);
    };
    const directWithHistory = async () => {
      const run = await direct(prompt(), history);
      record(HISTORY_TEXT, run.firstText);
      record(HISTORY_END, run.end);
    };

    // All cases interleaved run by run, rotating the order, so the drift of a shared, busy machine
    // (and the platform's own warming up) falls on every case alike: in separate phases or blocks of
    // 25, medians moved by up to 2x between them under outside load.
    progress(`chat: ${ROUNDS} new conversations, ${CONTINUED_ROUNDS} turns of one conversation, each with its direct run`);
    for (let i = 0; i < ROUNDS; i++) {
      if (i % ROUNDS_PER_WINDOW === 0) await freshWindow(platform, user.token);
      const steps = [newConversation, directNew, sameCallsNew];
      // CONTINUED_ROUNDS of the ROUNDS rounds, spread evenly.
      if (Math.floor(((i + 1) * CONTINUED_ROUNDS) / ROUNDS) > Math.floor((i * CONTINUED_ROUNDS) / ROUNDS)) steps.push(continueConversation, directWithHistory);
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
    }
    const messageCount = history.length;

    // Where a new conversation's milliseconds go, traced apart so the rows above carry no instrumentation.
    progress(`chat: ${TRACED} traced new conversations`);
    await freshWindow(platform, user.token);
    const tracer = attachTracer(platform.running.ports);
    const traces: Trace[] = [];
    try {
      for (let n = 0; n < TRACED; n++) traces.push(await tracer.trace(() => chatOnce(httpAgent, chatUrl, user.token, prompt())));
    } finally {
      tracer.detach();
    }

    const row = (name: string, note?: string) => measured(name, samples.get(name)!, note ? { note } : {});
    const share = (platformRow: MeasuredRow, runtimeRow: MeasuredRow) =>
      `platform's share: p50 +${(platformRow.p50 - runtimeRow.p50).toFixed(1)} ms, mean +${(platformRow.mean - runtimeRow.mean).toFixed(1)} ms`;
    const directText = row(DIRECT_TEXT, "POST /invoke on a runtime server started here, to the first `text` event: the agent's own first event");
    const directEnd = row(DIRECT_END, 'to the end of the NDJSON body (after `end`)');
    const sameCallsEnd = row(SAME_CALLS_END);
    const chatByte = row(CHAT_BYTE, '`__META__`, written after auth, rate limit, agent read and credit debit, before keys and the runtime');
    const chatText = row(CHAT_TEXT);
    const chatEnd = row(CHAT_END);
    const historyText = row(HISTORY_TEXT, `the same history as the continued conversation (up to ${messageCount} messages)`);
    const historyEnd = row(HISTORY_END);
    const continuedText = row(CONTINUED_TEXT);
    const continuedEnd = row(CONTINUED_END);
    const invokeOf = (trace: Trace) => spanOf(trace, 'compute.invoke');
    const stage = (name: string, of: (trace: Trace) => number, note: string) => measured(name, traces.map(of), { note });
    const breakdown = [
      stage(
        TO_INVOKE,
        (t) => invokeOf(t).start,
        `request sent to the runtime call (__META__ goes out after the debit): ${describeStoreCalls(traces, (t, s) => s.end <= invokeOf(t).start)}; still in flight when it starts: ${describeStoreCalls(traces, (t, s) => s.start < invokeOf(t).start && s.end > invokeOf(t).start)}`,
      ),
      stage(TO_RUNTIME_TEXT, (t) => markOf(t, 'runtime first event') - invokeOf(t).start, 'the local adapter and the agent, as the platform calls it'),
      stage(
        AFTER_RUNTIME,
        (t) => t.end - invokeOf(t).end,
        `the runtime's end to the body read in full (__METRICS__ last): ${describeStoreCalls(traces, (t, s) => s.start >= invokeOf(t).end)}`,
      ),
    ];
    return [
      directText,
      directEnd,
      versus(
        {
          ...sameCallsEnd,
          note: `a new conversation's 9 store calls in its 4 steps around the direct run, one HTTP hop, no kernel: +${(sameCallsEnd.p50 - directEnd.p50).toFixed(1)} ms p50`,
        },
        directEnd,
      ),
      versus(chatByte, directText),
      versus({ ...chatText, note: share(chatText, directText) }, directText),
      versus(
        versus({ ...chatEnd, note: `${share(chatEnd, directEnd)}; after the run: conversation save, counters, usage log, then __METRICS__` }, directEnd),
        sameCallsEnd,
      ),
      historyText,
      historyEnd,
      versus(versus(row(CONTINUED_BYTE, 'adds the conversation and history reads before `__META__`'), historyText), chatByte),
      versus(versus({ ...continuedText, note: share(continuedText, historyText) }, historyText), chatText),
      versus(versus({ ...continuedEnd, note: share(continuedEnd, historyEnd) }, historyEnd), chatEnd),
      ...breakdown,
    ];
  },
};
