/**
 * Channel traffic runs the agent through the chat service in-process (the `agentRuns` port), not
 * through the owner's own chat endpoint: it is limited by the channel's per-sender limit alone,
 * never by the owner's interactive chat limit (60 a minute), and still billed and traced (issue 31, item 4).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');
/** The case: more senders in one minute than the owner's interactive chat limit (60, functions/agents/agents.module.ts). */
const SENDERS = 65;
/** Deliveries in flight at once: enough to be quick, few enough for a two-core machine. */
const IN_FLIGHT = 5;

type LogLine = Record<string, unknown>;

describe('channel runs', () => {
  let platform: TestPlatform;
  const logLines: string[] = [];
  let owner: Awaited<ReturnType<typeof createUser>>;
  let agentId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ logLines });
    owner = await createUser(platform, { alias: 'channel-runs-owner', credits: 500 });
    const agent = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'channel-runs-echo', description: 'echo', sourceCode: ECHO },
    });
    expect(agent.status, agent.text).toBe(200);
    agentId = agent.body.data.agentId as string;
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it('answers 65 senders in one minute with the agent, and the owner can still chat; no run token, no request to the chat endpoint', async () => {
    // Prepare: an open webhook channel (no secret), and the start of a fresh rate-limit minute
    const channel = await platform.api('POST', '/channels', {
      token: owner.token,
      body: { name: 'open', platform: 'webhook', agentId, platformConfig: {} },
    });
    expect(channel.status, channel.text).toBe(200);
    const inbound = new URL(channel.body.data.webhookUrl as string).pathname;
    const creditsBefore = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits as number;
    platform.clock.alignToWindow(60_000);
    const linesBefore = logLines.length;

    // Act: one message from each of 65 senders, then the owner's own chat
    const answers: ApiResponse[] = [];
    for (let first = 0; first < SENDERS; first += IN_FLIGHT) {
      const batch = Array.from({ length: Math.min(IN_FLIGHT, SENDERS - first) }, (_, i) => first + i);
      answers.push(...(await Promise.all(batch.map((n) => platform.api('POST', inbound, { body: { senderId: `sender-${n}`, message: `hello ${n}` } })))));
    }
    const ownChat = await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: 'still mine' } });
    const creditsAfter = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits as number;
    const logs = await platform.api('GET', `/logs?resourceId=${agentId}&pageSize=100`, { token: owner.token });

    // Assess
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: SENDERS }, () => 200));
    expect(answers.map((a) => a.body.reply)).toEqual(Array.from({ length: SENDERS }, (_, n) => `echo: hello ${n}`));
    expect(ownChat.status, ownChat.text).toBe(200);
    expect(ownChat.body.data.response).toBe('echo: still mine');
    // Billed to the owner: at least one credit per run.
    expect(creditsBefore - creditsAfter).toBeGreaterThanOrEqual(SENDERS + 1);
    // Traced: each run's usage record is the owner's, a child of its inbound request.
    const inboundIds = new Set(answers.map((a) => a.headers.get('x-request-id')));
    const runs = (logs.body.data.logs as { rootRequestId: string; parentRequestId: string | null }[]).filter((log) => inboundIds.has(log.rootRequestId));
    expect(runs).toHaveLength(SENDERS);
    expect(runs.every((log) => log.parentRequestId === log.rootRequestId)).toBe(true);
    // No run went through the HTTP chat endpoint: the only chat request is the owner's own.
    const requests = logLines
      .slice(linesBefore)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line['message'] === 'request' && /^\/agent\/[^/]+\/chat$/.test(String(line['path'])));
    expect(requests).toHaveLength(1);
  }, 300_000);
});
