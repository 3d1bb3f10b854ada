import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { startStandIn } from '../support/platform-stand-in.ts';
import type { BenchModule } from './harness.ts';
import { measured } from './stats.ts';

const MESSAGES = 60;
/** Seconds the agent sleeps before answering: slower than any platform's deadline would allow inline. */
const AGENT_SLEEP_SEC = 3;
const SIGNING_SECRET = 'bench-signing-secret';

/**
 * Inbound acknowledgement with a slow agent (issue 18): a workspace-chat channel whose agent takes
 * 3 s per answer receives signed events one after another; each is timed from the request to the
 * platform's 200, which must come well within the platform's 3 s deadline because the run goes to
 * the reply queue. The replies reaching the loopback stand-in are counted, so a fast
 * acknowledgement that dropped the work would show.
 */
export const channelsBench: BenchModule = {
  name: 'channels',
  async run({ progress, defer }) {
    progress('channels: starting the platform and the chat stand-in');
    const slack = await startStandIn();
    defer(() => slack.close());
    const platform = await startTestPlatform({ ...DEFAULT_SPARES, env: { CHANNEL_API_BASE_WORKSPACE_CHAT: `${slack.url}/api` } });
    defer(() => platform.stop({ removeData: true }));
    const owner = await createUser(platform, { alias: 'bench-channels', credits: 10_000 });
    const sourceCode = readFileSync(new URL('../../python-runtime/tests/fixtures/sleeping_agent.py', import.meta.url), 'utf8');
    const agent = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName: 'bench-sleeper', description: 'slow', sourceCode } });
    const channel = await platform.api('POST', '/channels', {
      token: owner.token,
      body: {
        name: 'bench',
        platform: 'workspace-chat',
        agentId: agent.body.data.agentId,
        platformConfig: { signingSecret: SIGNING_SECRET, botToken: 'xoxb-bench' },
      },
    });
    const path = new URL(channel.body.data.webhookUrl as string).pathname;

    progress(`channels: ${MESSAGES} events to an agent that answers in ${AGENT_SLEEP_SEC} s`);
    const ackMs: number[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const raw = JSON.stringify({
        type: 'event_callback',
        event_id: `EvBench${i}`,
        event: { type: 'message', user: `U${i % 5}`, text: String(AGENT_SLEEP_SEC), channel: 'D1', channel_type: 'im', ts: `${i}.0` },
      });
      const ts = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${ts}:${raw}`).digest('hex')}`;
      const started = performance.now();
      const res = await platform.api('POST', path, {
        rawBody: raw,
        headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': ts, 'x-slack-signature': signature },
      });
      ackMs.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`event ${i} answered ${res.status}: ${res.text}`);
    }
    progress('channels: waiting for the replies');
    await platform.running.tasks.idle();
    const replies = slack.to('/api/chat.postMessage').length;
    if (replies !== MESSAGES) throw new Error(`${replies} of ${MESSAGES} replies reached the stand-in`);

    return [measured(`inbound ack, agent answering in ${AGENT_SLEEP_SEC} s`, ackMs, { note: `${replies}/${MESSAGES} replies delivered after` })];
  },
};
