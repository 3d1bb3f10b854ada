import { createHmac } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { InteractionResponseType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { INBOUND_PER_SENDER } from '../../functions/channels/inbound.service.ts';
import {
  discordApplication,
  discordPing,
  discordSlashCommand,
  metaRequest,
  outsideTwilioSchema,
  slackEventCallback,
  slackRequest,
  slackUrlVerification,
  snowflake,
  telegramRequest,
  telegramTextUpdate,
  TELEGRAM_SECRET_TOKEN,
  twilioMediaStream,
  twilioRequest,
  twilioSid,
  twilioSmsParams,
  twilioVoiceParams,
  whatsappTextNotification,
  type SignedRequest,
} from '../support/channel-signing.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { startStandIn, type StandIn } from '../support/platform-stand-in.ts';

const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
type User = Awaited<ReturnType<typeof createUser>>;

/** The platform's own `webhook` kind (SPEC 4.9): `X-Signature-256: sha256=` + hex HMAC-SHA256 of the body. */
const hmacHex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

/** Channels over HTTP against the real local platform, with loopback stand-ins of each platform's API (SPEC 4.9). */
describe('channels', () => {
  let platform: TestPlatform;
  let owner: User;
  let other: User;
  let echoId: string;
  let historyId: string;
  /** A voice agent: calls need one. */
  let voiceId: string;
  const stand: Record<'slack' | 'discord' | 'telegram' | 'whatsapp' | 'phone', StandIn> = {} as never;

  const createAgent = async (user: User, agentName: string, sourceCode: string, agentType?: 'bidi') => {
    const res = await platform.api('POST', '/agent/create', { token: user.token, body: { agentName, description: agentName, sourceCode, agentType } });
    expect(res.status).toBe(200);
    return res.body.data.agentId as string;
  };
  const createChannel = async (body: Record<string, unknown>, user: User = owner) => platform.api('POST', '/channels', { token: user.token, body });
  const channelOf = async (body: Record<string, unknown>) => {
    const res = await createChannel({ name: `ch ${body['platform']}`, agentId: echoId, ...body });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { channelId: string; webhookUrl: string };
  };
  const inboundPath = (url: string) => new URL(url).pathname;
  const signedWebhook = (channel: { webhookUrl: string }, secret: string, payload: unknown) => {
    const raw = JSON.stringify(payload);
    return platform.api('POST', inboundPath(channel.webhookUrl), {
      rawBody: raw,
      headers: { 'content-type': 'application/json', 'x-signature-256': `sha256=${hmacHex(secret, raw)}` },
    });
  };
  /** A request as the outside service sends it (channel-signing.ts), to the channel's inbound URL. */
  const deliver = (channel: { webhookUrl: string }, request: SignedRequest) => platform.api('POST', inboundPath(channel.webhookUrl), request);
  const settle = () => platform.running.tasks.idle();

  beforeAll(async () => {
    stand.slack = await startStandIn();
    stand.discord = await startStandIn();
    stand.telegram = await startStandIn();
    stand.whatsapp = await startStandIn({ '/messages': { messages: [{ id: 'wamid.1' }] } });
    stand.phone = await startStandIn({ '/Messages.json': { sid: 'SM123', status: 'queued' }, '/Calls.json': { sid: 'CA123', status: 'queued' } });
    platform = await startTestPlatform({
      env: {
        CHANNEL_API_BASE_WORKSPACE_CHAT: `${stand.slack.url}/api`,
        CHANNEL_API_BASE_COMMUNITY_CHAT: `${stand.discord.url}/api/v10`,
        CHANNEL_API_BASE_BOT_MESSENGER: stand.telegram.url,
        CHANNEL_API_BASE_PHONE_MESSENGER: `${stand.whatsapp.url}/v21.0`,
        CHANNEL_API_BASE_PHONE: stand.phone.url,
        CHANNEL_AUTO_PAUSE_FAILURES: '3',
      },
    });
    owner = await createUser(platform, { alias: 'channel-owner', credits: 500 });
    other = await createUser(platform, { alias: 'channel-other', credits: 10 });
    echoId = await createAgent(owner, 'channel-echo', fixture('echo_agent'));
    historyId = await createAgent(owner, 'channel-history', fixture('history_agent'));
    voiceId = await createAgent(owner, 'channel-voice-echo', fixture('bidi_echo_agent'), 'bidi');
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await Promise.all(Object.values(stand).map((s) => s.close()));
  });

  describe('managing channels', () => {
    it('creates a channel and answers the SPEC 4.9 shape with the inbound URL', async () => {
      // Act
      const res = await createChannel({ name: 'hook', platform: 'webhook', agentId: echoId, platformConfig: {} });

      // Assess
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data).sort()).toEqual(['agentId', 'channelId', 'createdAt', 'name', 'platform', 'status', 'webhookUrl']);
      expect(res.body.data.channelId).toMatch(/^ch-/);
      expect(res.body.data.webhookUrl).toBe(`${platform.url}/channels/inbound/${res.body.data.channelId}/webhook`);
      expect(res.body.data.status).toBe('active');
    });

    it.each([
      ['workspace-chat', { botToken: 'xoxb-1' }, 'signingSecret'],
      ['community-chat', { botToken: 'b' }, 'publicKey'],
      ['phone-messenger', { verifyToken: 'v', accessToken: 'a', appSecret: 's' }, 'phoneNumberId'],
      ['phone-voice', { accountSid: 'AC0123456789', authToken: 't' }, 'phoneNumber'],
    ])('refuses a %s config of %j, naming %s', async (platformName, platformConfig, missing) => {
      // Act
      const res = await createChannel({ name: 'x', platform: platformName, agentId: platformName === 'phone-voice' ? voiceId : echoId, platformConfig });

      // Assess
      expect(res.status).toBe(400);
      expect(res.text).toContain(`platformConfig.${missing}`);
    });

    it('refuses a phone number that is not E.164, and an unknown platform', async () => {
      // Act
      const badNumber = await createChannel({
        name: 'x',
        platform: 'phone-sms',
        agentId: echoId,
        platformConfig: { accountSid: 'AC0123456789', authToken: 't', phoneNumber: '555-1234' },
      });
      const badPlatform = await createChannel({ name: 'x', platform: 'carrier-pigeon', agentId: echoId, platformConfig: {} });

      // Assess
      expect(badNumber.status).toBe(400);
      expect(badNumber.text).toContain('E.164');
      expect(badPlatform.status).toBe(400);
      expect(badPlatform.text).toContain('platform');
    });

    it('masks secrets in every response and keeps them out of the data directory', async () => {
      // Prepare
      const signingSecret = 'signing-secret-that-must-stay-hidden-9876';
      const botToken = 'xoxb-token-that-must-stay-hidden-5432';
      const created = await channelOf({ platform: 'workspace-chat', platformConfig: { signingSecret, botToken } });

      // Act
      const got = await platform.api('GET', `/channels/${created.channelId}`, { token: owner.token });
      const listed = await platform.api('GET', '/channels?limit=100', { token: owner.token });
      const updated = await platform.api('PUT', `/channels/${created.channelId}`, { token: owner.token, body: { name: 'renamed' } });
      const files = await filesUnder(platform.dataDir);
      const holding: string[] = [];
      for (const file of files) {
        const content = await readFile(file);
        if (content.includes(signingSecret) || content.includes(botToken)) holding.push(file);
      }

      // Assess
      expect(got.body.data.platformConfig).toEqual({ signingSecret: '****9876', botToken: '****5432' });
      for (const text of [got.text, listed.text, updated.text]) {
        expect(text).not.toContain(signingSecret);
        expect(text).not.toContain(botToken);
      }
      expect(files.length).toBeGreaterThan(0);
      expect(holding).toEqual([]);
    });

    it('lists the caller’s channels a page at a time', async () => {
      // Prepare
      const lister = await createUser(platform, { alias: 'channel-lister', credits: 10 });
      const agentId = await createAgent(lister, 'lister-echo', fixture('echo_agent'));
      for (const name of ['a', 'b', 'c']) expect((await createChannel({ name, platform: 'webhook', agentId, platformConfig: {} }, lister)).status).toBe(200);

      // Act
      const first = await platform.api('GET', '/channels?limit=2', { token: lister.token });
      const second = await platform.api('GET', `/channels?limit=2&cursor=${first.body.data.nextCursor}`, { token: lister.token });

      // Assess
      expect(first.body.data.count).toBe(2);
      expect(first.body.data.channels.map((c: { name: string }) => c.name)).toEqual(['a', 'b']);
      expect(second.body.data.channels.map((c: { name: string }) => c.name)).toEqual(['c']);
      expect(second.body.data.nextCursor).toBeNull();
    });

    it('answers 403 for another user’s channel, 404 for a missing one', async () => {
      // Prepare
      const created = await channelOf({ platform: 'webhook', platformConfig: {} });

      // Act
      const read = await platform.api('GET', `/channels/${created.channelId}`, { token: other.token });
      const change = await platform.api('PUT', `/channels/${created.channelId}`, { token: other.token, body: { name: 'mine' } });
      const remove = await platform.api('DELETE', `/channels/${created.channelId}`, { token: other.token });
      const mute = await platform.api('POST', `/channels/${created.channelId}/mute-sender`, { token: other.token, body: { senderId: 'x', reason: 'y' } });
      const missing = await platform.api('GET', '/channels/ch-000000000000000000000', { token: owner.token });

      // Assess
      expect([read.status, change.status, remove.status, mute.status]).toEqual([403, 403, 403, 403]);
      expect(missing.status).toBe(404);
    });

    it('updates, pauses and reactivates, and deletes', async () => {
      // Prepare
      const created = await channelOf({ platform: 'webhook', platformConfig: { secret: 'first-secret-value' } });

      // Act
      const paused = await platform.api('PUT', `/channels/${created.channelId}`, {
        token: owner.token,
        body: { status: 'paused', allowedSenders: ['u1'], platformConfig: { secret: 'second-secret-value' } },
      });
      const active = await platform.api('PUT', `/channels/${created.channelId}`, { token: owner.token, body: { status: 'active' } });
      const deleted = await platform.api('DELETE', `/channels/${created.channelId}`, { token: owner.token });
      const after = await platform.api('GET', `/channels/${created.channelId}`, { token: owner.token });

      // Assess
      expect(paused.body.data).toMatchObject({ status: 'paused', allowedSenders: ['u1'], platformConfig: { secret: '****alue' } });
      expect(active.body.data).toMatchObject({ status: 'active', failureCount: 0 });
      expect(deleted.body.data).toEqual({ channelId: created.channelId, deleted: true });
      expect(after.status).toBe(404);
    });

    it('keeps failures counted while an edit was under way, and resets them when set active', async () => {
      // Prepare: a failure counted, then the channel read for an edit, then another failure
      const created = await channelOf({ platform: 'webhook', platformConfig: {} });
      const store = platform.running.ports.channels;
      const countFailure = () => store.countFailure(created.channelId, 0, 'unused', platform.clock.now());
      await countFailure();
      const read = (await store.get(created.channelId))!;
      await countFailure();

      // Act: the edit made from the earlier read, then reactivation over the API
      const edited = await store.update(created.channelId, { name: 'renamed' }, read.updatedAt, read.updatedAt + 1);
      const reactivated = await platform.api('PUT', `/channels/${created.channelId}`, { token: owner.token, body: { status: 'active' } });

      // Assess
      expect(edited).toMatchObject({ name: 'renamed', failureCount: 2 });
      expect(reactivated.body.data).toMatchObject({ name: 'renamed', status: 'active', failureCount: 0 });
    });

    it('tests a channel with its agent', async () => {
      // Prepare
      const created = await channelOf({ platform: 'webhook', platformConfig: {} });

      // Act
      const res = await platform.api('POST', `/channels/${created.channelId}/test`, { token: owner.token, body: { message: 'ping' } });

      // Assess
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual({ response: 'echo: ping', conversationId: expect.any(String) });
    });
  });

  describe('webhook channels', () => {
    it('answers a signed message with the agent’s reply, keeps one conversation per sender, and refuses a bad signature', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', agentId: historyId, platformConfig: { secret: 'hook-secret' } });

      // Act
      const first = await signedWebhook(channel, 'hook-secret', { senderId: 'alice', message: 'one', messageId: 'm1' });
      const second = await signedWebhook(channel, 'hook-secret', { senderId: 'alice', message: 'two', messageId: 'm2' });
      const otherSender = await signedWebhook(channel, 'hook-secret', { senderId: 'bob', message: 'one', messageId: 'm3' });
      const forged = await signedWebhook(channel, 'wrong-secret', { senderId: 'alice', message: 'three', messageId: 'm4' });
      const unsigned = await platform.api('POST', inboundPath(channel.webhookUrl), { rawBody: '{"senderId":"alice","message":"x"}' });

      // Assess
      expect(first.status, first.text).toBe(200);
      expect(first.body).toEqual({ reply: 'history=0 roles=', conversationId: expect.any(String) });
      expect(second.body).toEqual({ reply: 'history=2 roles=user,assistant', conversationId: first.body.conversationId });
      expect(otherSender.body.reply).toBe('history=0 roles=');
      expect(otherSender.body.conversationId).not.toBe(first.body.conversationId);
      expect(forged.status).toBe(401);
      expect(unsigned.status).toBe(401);
    });

    it('bills the run to the owner and logs it as a child of the inbound request', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', platformConfig: { secret: 's' } });
      const creditsBefore = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits as number;

      // Act
      const res = await signedWebhook(channel, 's', { senderId: 'lineage', message: 'trace me' });
      const inboundId = res.headers.get('x-request-id');
      const logs = await platform.api('GET', `/logs?resourceId=${echoId}&pageSize=100`, { token: owner.token });
      const creditsAfter = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits as number;

      // Assess
      expect(inboundId).toBeTruthy();
      const chat = (logs.body.data.logs as { requestId: string }[]).find((log) => JSON.stringify(log).includes('trace me'));
      expect(chat).toBeDefined();
      const full = await platform.api('GET', `/logs/${chat!.requestId}`, { token: owner.token });
      expect(full.body.data).toMatchObject({ rootRequestId: inboundId, resourceType: 'agent' });
      expect(creditsAfter).toBeLessThan(creditsBefore);
    });

    it('acknowledges a repeated delivery once and does not run the agent twice', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', agentId: historyId, platformConfig: { secret: 's' } });
      await signedWebhook(channel, 's', { senderId: 'carol', message: 'one', messageId: 'dup-1' });

      // Act
      const repeat = await signedWebhook(channel, 's', { senderId: 'carol', message: 'one', messageId: 'dup-1' });
      const next = await signedWebhook(channel, 's', { senderId: 'carol', message: 'two', messageId: 'dup-2' });

      // Assess
      expect(repeat.status).toBe(200);
      expect(repeat.body).toMatchObject({ ignored: true, reason: 'duplicate' });
      expect(next.body.reply).toBe('history=2 roles=user,assistant');
    });

    it('runs a signed delivery without a messageId once however often it is sent; an open webhook answers each', async () => {
      // Prepare
      const signed = await channelOf({ platform: 'webhook', agentId: historyId, platformConfig: { secret: 's' } });
      const open = await channelOf({ platform: 'webhook', platformConfig: {} });
      const body = { senderId: 'replayed', message: 'pay me' };

      // Act: one signed request sent three times
      const sent = [];
      for (let i = 0; i < 3; i++) sent.push(await signedWebhook(signed, 's', body));
      const next = await signedWebhook(signed, 's', { ...body, message: 'pay me again' });
      const openTwice = [await signedWebhook(open, 'any', body), await signedWebhook(open, 'any', body)];

      // Assess
      expect(sent[0]!.body.reply).toBe('history=0 roles=');
      expect(sent.slice(1).map((r) => r.body)).toEqual([
        { ignored: true, reason: 'duplicate' },
        { ignored: true, reason: 'duplicate' },
      ]);
      expect(next.body.reply).toBe('history=2 roles=user,assistant');
      expect(openTwice.map((r) => r.body.reply)).toEqual(['echo: pay me', 'echo: pay me']);
    });

    it('ignores deliveries to a paused channel', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', platformConfig: { secret: 's' } });
      await platform.api('PUT', `/channels/${channel.channelId}`, { token: owner.token, body: { status: 'paused' } });

      // Act
      const res = await signedWebhook(channel, 's', { senderId: 'dan', message: 'hello' });

      // Assess
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ignored: true, reason: 'paused' });
    });

    it('accepts a muted sender’s message with 202 without the agent, lists the mute, and answers again after unmute', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', platformConfig: { secret: 's' } });

      // Act
      const mute = await platform.api('POST', `/channels/${channel.channelId}/mute-sender`, {
        token: owner.token,
        body: { senderId: 'erin', reason: 'human takeover' },
      });
      const whileMuted = await signedWebhook(channel, 's', { senderId: 'erin', message: 'hello' });
      const list = await platform.api('GET', `/channels/${channel.channelId}/muted-senders`, { token: owner.token });
      const unmute = await platform.api('POST', `/channels/${channel.channelId}/unmute-sender`, { token: owner.token, body: { senderId: 'erin' } });
      const afterUnmute = await signedWebhook(channel, 's', { senderId: 'erin', message: 'hello' });
      const listAfter = await platform.api('GET', `/channels/${channel.channelId}/muted-senders`, { token: owner.token });

      // Assess
      expect(mute.body.data).toEqual({ senderId: 'erin', muted: true });
      expect(whileMuted.status).toBe(202);
      expect(whileMuted.body.reply).toBeUndefined();
      expect(list.body.data).toEqual({
        mutedSenders: [{ senderId: 'erin', reason: 'human takeover', mutedAt: expect.any(String), mutedBy: owner.userId }],
        count: 1,
      });
      expect(unmute.body.data).toEqual({ senderId: 'erin', muted: false });
      expect(afterUnmute.body.reply).toBe('echo: hello');
      expect(listAfter.body.data.count).toBe(0);
    });

    it('answers only allowed senders, allowed groups, and mentions when required', async () => {
      // Prepare
      const channel = await channelOf({
        platform: 'webhook',
        platformConfig: { secret: 's' },
        allowedSenders: ['frank', 'gina'],
        groupPolicy: 'allowlist',
        allowedGroups: ['g-ok'],
        requireMention: true,
      });
      const open = await channelOf({ platform: 'webhook', platformConfig: { secret: 's' } });

      // Act
      const stranger = await signedWebhook(channel, 's', { senderId: 'mallory', message: 'hi' });
      const direct = await signedWebhook(channel, 's', { senderId: 'frank', message: 'hi' });
      const otherGroup = await signedWebhook(channel, 's', { senderId: 'frank', message: 'hi', groupId: 'g-no' });
      const unmentioned = await signedWebhook(channel, 's', { senderId: 'gina', message: 'hi', groupId: 'g-ok', mentioned: false });
      const mentioned = await signedWebhook(channel, 's', { senderId: 'gina', message: 'hi', groupId: 'g-ok', mentioned: true });
      const groupsDisabled = await signedWebhook(open, 's', { senderId: 'anyone', message: 'hi', groupId: 'g-ok' });

      // Assess
      expect(stranger.body).toMatchObject({ ignored: true, reason: 'sender not allowed' });
      expect(direct.body.reply).toBe('echo: hi');
      expect(otherGroup.body).toMatchObject({ ignored: true, reason: 'group not allowed' });
      expect(unmentioned.body).toMatchObject({ ignored: true, reason: 'not mentioned' });
      expect(mentioned.body.reply).toBe('echo: hi');
      expect(groupsDisabled.body).toMatchObject({ ignored: true, reason: 'groups disabled' });
    });

    it('limits each sender of a channel (429), not the others', async () => {
      // Prepare: a muted sender costs no agent run, and still counts against the limit.
      const channel = await channelOf({ platform: 'webhook', platformConfig: { secret: 's' } });
      await platform.api('POST', `/channels/${channel.channelId}/mute-sender`, { token: owner.token, body: { senderId: 'flood', reason: 'test' } });
      await platform.api('POST', `/channels/${channel.channelId}/mute-sender`, { token: owner.token, body: { senderId: 'calm', reason: 'test' } });
      const statuses: number[] = [];
      // The 31 deliveries fall in one of the limiter's minute windows.
      platform.clock.alignToWindow(INBOUND_PER_SENDER.windowSec * 1000);

      // Act
      for (let i = 0; i < 31; i++) statuses.push((await signedWebhook(channel, 's', { senderId: 'flood', message: `m${i}` })).status);
      const calm = await signedWebhook(channel, 's', { senderId: 'calm', message: 'hi' });

      // Assess
      expect(statuses.slice(0, 30).every((s) => s === 202)).toBe(true);
      expect(statuses[30]).toBe(429);
      expect(calm.status).toBe(202);
    });
  });

  describe('workspace-chat', () => {
    const secret = 'slack-signing-secret';
    const slackPost = (channel: { webhookUrl: string }, payload: unknown, options: { secret?: string; ageSec?: number } = {}) =>
      deliver(channel, slackRequest(options.secret ?? secret, payload, { timestampSec: Math.floor(Date.now() / 1000) - (options.ageSec ?? 0) }));

    it('answers the URL challenge, replies through chat.postMessage, and refuses bad or old signatures', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'workspace-chat', platformConfig: { signingSecret: secret, botToken: 'xoxb-test-token' } });
      const message = { type: 'message', user: 'U0001USER', text: 'hi slack', channel: 'D0001DM', channel_type: 'im', ts: '1715000000.000100' };
      const event = slackEventCallback('Ev0001', message);

      // Act
      const challenge = await slackPost(channel, slackUrlVerification('abc123'));
      const ack = await slackPost(channel, event);
      const retry = await slackPost(channel, event);
      await settle();
      const badSig = await slackPost(channel, slackEventCallback('Ev0002', message), { secret: 'wrong' });
      const old = await slackPost(channel, slackEventCallback('Ev0003', message), { ageSec: 600 });

      // Assess
      expect(challenge.body).toEqual({ challenge: 'abc123' });
      expect(ack.status).toBe(200);
      expect(retry.status).toBe(200);
      const posted = stand.slack.to('/api/chat.postMessage');
      expect(posted).toHaveLength(1);
      expect(JSON.parse(posted[0]!.body)).toEqual({ channel: 'D0001DM', text: 'echo: hi slack' });
      expect(posted[0]!.headers['authorization']).toBe('Bearer xoxb-test-token');
      expect(badSig.status).toBe(401);
      expect(old.status).toBe(401);
    });
  });

  describe('automatic pause', () => {
    const secret = 'pause-signing-secret';
    let n = 0;
    /** One Slack message from a new sender (no per-sender limit in play), delivered and settled. */
    const message = async (channel: { webhookUrl: string }) => {
      n++;
      const event = slackEventCallback(`EvPause${n}`, {
        type: 'message',
        user: `U000PAUSE${n}`,
        text: `message ${n}`,
        channel: 'D000PAUSE',
        channel_type: 'im',
        ts: `1715000000.${String(n).padStart(6, '0')}`,
      });
      const res = await deliver(channel, slackRequest(secret, event));
      await settle();
      return res;
    };
    const channelState = async (channelId: string) => (await platform.api('GET', `/channels/${channelId}`, { token: owner.token })).body.data;

    it('pauses a channel after 3 failed deliveries in a row (the test setting), not after 3 with a success between, and resumes when set active', async () => {
      // Prepare: a channel whose agent raises on every message
      const raisingId = await createAgent(owner, 'channel-raising', fixture('raising_agent'));
      const channel = await channelOf({ platform: 'workspace-chat', agentId: raisingId, platformConfig: { signingSecret: secret, botToken: 'xoxb-pause' } });
      const setAgent = (agentId: string) => platform.api('PUT', `/channels/${channel.channelId}`, { token: owner.token, body: { agentId } });

      // Act: two failures, a success, two failures (never 3 in a row), then a third in a row
      await message(channel);
      await message(channel);
      await setAgent(echoId);
      await message(channel);
      await setAgent(raisingId);
      await message(channel);
      await message(channel);
      const afterFour = await channelState(channel.channelId);
      await message(channel);
      const paused = await channelState(channel.channelId);
      const whilePaused = await message(channel);
      const resumed = await platform.api('PUT', `/channels/${channel.channelId}`, { token: owner.token, body: { status: 'active' } });

      // Assess
      expect(afterFour).toMatchObject({ status: 'active', failureCount: 4, pausedReason: null });
      expect(paused).toMatchObject({ status: 'paused', failureCount: 5 });
      expect(paused.pausedReason).toContain('3 failed deliveries in a row');
      expect(whilePaused.body).toMatchObject({ ignored: true, reason: 'paused' });
      expect(resumed.body.data).toMatchObject({ status: 'active', failureCount: 0, pausedReason: null });
      const stored = await platform.running.ports.channels.get(channel.channelId);
      expect(stored?.consecutiveFailures).toBe(0);
    });
  });

  describe('community-chat', () => {
    const app = discordApplication();
    const discordPost = async (channel: { webhookUrl: string }, payload: unknown, signer = app, timestampSec?: string) =>
      deliver(channel, await signer.request(payload, timestampSec === undefined ? {} : { timestampSec }));

    it('answers PING, defers a command and sends the reply as a follow-up, and refuses a bad signature', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'community-chat', platformConfig: { publicKey: app.publicKey, botToken: 'discord-bot-token' } });
      const applicationId = snowflake('app1');
      const command = discordSlashCommand({ id: snowflake('i-1'), applicationId, token: 'itok', userId: snowflake('D-U1'), text: 'hi discord' });

      // Act
      const ping = await discordPost(channel, discordPing(applicationId));
      const deferred = await discordPost(channel, command);
      await settle();
      const forged = await discordPost(channel, discordPing(applicationId), discordApplication());

      // Assess
      expect(ping.body).toEqual({ type: InteractionResponseType.PONG });
      expect(deferred.body).toEqual({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
      const followUps = stand.discord.to(`/api/v10/webhooks/${applicationId}/itok`);
      expect(followUps).toHaveLength(1);
      expect(JSON.parse(followUps[0]!.body)).toEqual({ content: 'echo: hi discord' });
      expect(forged.status).toBe(401);
    });

    it('refuses a request signed at a time outside the 5-minute window, and runs one signed command without an id once however often it is sent', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'community-chat', platformConfig: { publicKey: app.publicKey, botToken: 'discord-bot-token' } });
      const applicationId = snowflake('app2');
      const command = (token: string) => discordSlashCommand({ id: null, applicationId, token, userId: snowflake('D-U2'), text: 'hi again' });
      const now = String(Math.floor(Date.now() / 1000));
      const signedNow = await app.request(command('no-id-token'), { timestampSec: now });

      // Act
      const in2001 = await discordPost(channel, command('old-token'), app, '978307200');
      const future = await discordPost(channel, command('future-token'), app, String(Number(now) + 3600));
      const replays = [];
      for (let i = 0; i < 3; i++) replays.push(await deliver(channel, signedNow));
      await settle();

      // Assess
      expect(in2001.status).toBe(401);
      expect(future.status).toBe(401);
      expect(replays.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(stand.discord.to(`/api/v10/webhooks/${applicationId}/old-token`)).toHaveLength(0);
      expect(stand.discord.to(`/api/v10/webhooks/${applicationId}/no-id-token`)).toHaveLength(1);
    });
  });

  describe('bot-messenger', () => {
    it('registers its webhook with a secret, replies through sendMessage, refuses a wrong secret, and deregisters on delete', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'bot-messenger', platformConfig: { botToken: '123:telegram-token' } });
      const registered = stand.telegram.to('/bot123:telegram-token/setWebhook');
      const { url, secret_token: secretToken } = JSON.parse(registered[0]!.body) as { url: string; secret_token: string };
      const update = telegramTextUpdate({ updateId: 9001, messageId: 1, userId: 42, text: 'hi telegram' });
      const post = (token: string) => deliver(channel, telegramRequest(token, update));

      // Act
      const ok = await post(secretToken);
      await settle();
      const wrong = await post('not-the-secret');
      const deleted = await platform.api('DELETE', `/channels/${channel.channelId}`, { token: owner.token });

      // Assess
      expect(url).toBe(channel.webhookUrl);
      expect(secretToken).toMatch(TELEGRAM_SECRET_TOKEN);
      expect(secretToken.length).toBeGreaterThanOrEqual(16);
      expect(ok.status).toBe(200);
      const sent = stand.telegram.to('/bot123:telegram-token/sendMessage');
      expect(sent.map((r) => JSON.parse(r.body))).toEqual([{ chat_id: '42', text: 'echo: hi telegram' }]);
      expect(wrong.status).toBe(401);
      expect(deleted.status).toBe(200);
      expect(stand.telegram.to('/bot123:telegram-token/deleteWebhook')).toHaveLength(1);
    });
  });

  describe('phone-messenger', () => {
    it('answers the verify challenge, replies through the messages endpoint, and refuses a bad signature', async () => {
      // Prepare
      const channel = await channelOf({
        platform: 'phone-messenger',
        platformConfig: { verifyToken: 'verify-me', accessToken: 'wa-access-token', phoneNumberId: '1234567890', appSecret: 'wa-app-secret' },
      });
      const base = inboundPath(channel.webhookUrl).replace(/phone-messenger$/, 'whatsapp');
      // Meta signs the body with non-ASCII characters escaped: the signature is over those bytes.
      const notification = whatsappTextNotification({
        phoneNumberId: '1234567890',
        from: '15550001111',
        name: 'Zoë',
        messageId: 'wamid.HBgLMTU1NTAwMDExMTEVAgASGBQzQUVCNTg2QTk4RkM0MTBGRTg5QgA=',
        text: 'hi whatsapp ☀',
      });

      // Act
      const challenge = await platform.api('GET', `${base}?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=chal-42`);
      const wrongToken = await platform.api('GET', `${base}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=chal-42`);
      const ok = await deliver(channel, metaRequest('wa-app-secret', notification));
      await settle();
      const forged = await deliver(channel, metaRequest('other', notification));

      // Assess
      expect(challenge.status).toBe(200);
      expect(challenge.text).toBe('chal-42');
      expect(challenge.headers.get('x-content-type-options')).toBe('nosniff');
      expect(wrongToken.status).toBe(401);
      expect(ok.status).toBe(200);
      const sent = stand.whatsapp.to('/v21.0/1234567890/messages');
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0]!.body)).toEqual({ messaging_product: 'whatsapp', to: '15550001111', type: 'text', text: { body: 'echo: hi whatsapp ☀' } });
      expect(sent[0]!.headers['authorization']).toBe('Bearer wa-access-token');
      expect(forged.status).toBe(401);
    });
  });

  describe('phone channels', () => {
    const authToken = 'twilio-auth-token-0001';
    const accountSid = twilioSid('AC', 'channel-owner');
    const phoneConfig = { accountSid, authToken, phoneNumber: '+15557654321' };
    const twilioPost = (channel: { webhookUrl: string }, params: Record<string, string>, token = authToken) =>
      deliver(channel, twilioRequest(token, channel.webhookUrl, params));
    /** Twilio's incoming-message parameters; a null seed sends none of the message's SIDs. */
    const smsParams = (sidSeed: string | null, from: string, body: string) =>
      twilioSmsParams({ accountSid, messageSid: sidSeed === null ? null : twilioSid('SM', sidSeed), from, to: phoneConfig.phoneNumber, body });
    const callParams = (callSeed: string, from: string) =>
      twilioVoiceParams({ accountSid, callSid: twilioSid('CA', callSeed), from, to: phoneConfig.phoneNumber });
    /** The stream URL and `<Parameter>`s of the TwiML that answers a call. */
    const streamOf = (twiml: string) => ({
      streamUrl: /<Stream url="([^"]+)">/.exec(twiml)![1]!,
      parameters: Object.fromEntries([...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1]!, m[2]!])),
    });

    it('replies to an SMS through the messages API, and refuses a bad signature', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });

      // Act
      const ok = await twilioPost(channel, smsParams('in-1', '+15550002222', 'hi phone'));
      await settle();
      const forged = await twilioPost(channel, smsParams('in-2', '+15550002222', 'x'), 'wrong');

      // Assess
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toContain('xml');
      const sent = stand.phone.to(`/2010-04-01/Accounts/${accountSid}/Messages.json`);
      const last = new URLSearchParams(sent[sent.length - 1]!.body);
      expect(Object.fromEntries(last)).toEqual({ From: '+15557654321', To: '+15550002222', Body: 'echo: hi phone' });
      expect(forged.status).toBe(401);
    });

    it('handles STOP, HELP and START: a stopped number gets no replies until START', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });
      const from = '+15550003333';
      const sms = (sid: string, body: string) => twilioPost(channel, smsParams(sid, from, body));
      const repliesTo = () => stand.phone.to('/Messages.json').filter((r) => new URLSearchParams(r.body).get('To') === from).length;

      // Act
      const stop = await sms('s1', 'STOP');
      await sms('s2', 'are you there?');
      await settle();
      const whileStopped = repliesTo();
      const help = await sms('s3', 'HELP');
      const start = await sms('s4', 'START');
      await sms('s5', 'back');
      await settle();

      // Assess
      expect(stop.text).toContain('<Message>');
      expect(stop.text).toContain('unsubscribed');
      expect(whileStopped).toBe(0);
      expect(help.text).toContain('STOP');
      expect(start.text).toContain('subscribed again');
      expect(repliesTo()).toBe(1);
    });

    it('answers a call with TwiML that connects to the voice bridge with an agent-scoped token and the channel', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'phone-voice', agentId: voiceId, platformConfig: phoneConfig, initialPrompt: 'Greet the caller.' });

      // Act
      const res = await twilioPost(channel, callParams('in-1', '+15550004444'));

      // Assess
      expect(res.status).toBe(200);
      expect(res.text).toMatch(new RegExp(`<Connect><Stream url="ws://[^"]+/ws/twilio/${voiceId}">`));
      const token = /<Parameter name="token" value="([^"]+)"\/>/.exec(res.text)?.[1];
      expect(token).toMatch(/^svc_run_/);
      expect(token).not.toBe(owner.token);
      expect(res.text).toContain(`<Parameter name="channelId" value="${channel.channelId}"/>`);
      // The call's token reaches only the chat of that agent: managing the account is refused.
      const listing = await platform.api('GET', '/channels', { token: token! });
      expect(listing.status).toBe(403);
    });

    it('answers a call webhook once: the same call sent again gets no voice token; an SMS without a MessageSid runs once', async () => {
      // Prepare
      const voice = await channelOf({ platform: 'phone-voice', agentId: voiceId, platformConfig: phoneConfig });
      const sms = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });
      const call = callParams('replayed', '+15550007777');
      const text = smsParams(null, '+15550008888', 'no sid here');
      const repliesTo = () => stand.phone.to('/Messages.json').filter((r) => new URLSearchParams(r.body).get('To') === text['From']).length;

      // Act
      const calls = [await twilioPost(voice, call), await twilioPost(voice, call), await twilioPost(voice, call)];
      const otherCall = await twilioPost(voice, callParams('another', '+15550007777'));
      for (let i = 0; i < 3; i++) await twilioPost(sms, text);
      await settle();

      // Assess
      expect(calls[0]!.text).toContain('<Parameter name="token"');
      for (const repeat of calls.slice(1)) {
        expect(repeat.status).toBe(200);
        expect(repeat.text).not.toContain('svc_run_');
        expect(repeat.text).not.toContain('<Stream');
      }
      expect(otherCall.text).toContain('<Parameter name="token"');
      expect(repliesTo()).toBe(1);
    });

    it('connects the call with the channel’s initialPrompt overriding the agent’s, so the agent speaks first', async () => {
      // Prepare: a voice agent with no prompt of its own (it waits for the caller); the channel's makes it speak
      const created = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'channel-voice', description: 'voice', sourceCode: fixture('bidi_echo_agent'), agentType: 'bidi' },
      });
      const voiceAgentId = created.body.data.agentId as string;
      const channel = await channelOf({ platform: 'phone-voice', agentId: voiceAgentId, platformConfig: phoneConfig, initialPrompt: 'long:3' });
      const { streamUrl, parameters } = streamOf((await twilioPost(channel, callParams('in-2', '+15550004444'))).text);
      const twilioSide = twilioMediaStream({ seed: 'in-2', accountSid });
      const ws = new WebSocket(streamUrl);
      const frames: unknown[] = [];
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const media = new Promise<Record<string, unknown>>((resolve) =>
        ws.on('message', (data) => {
          const frame = JSON.parse(String(data)) as Record<string, unknown>;
          frames.push(frame);
          if (frame['event'] === 'media') resolve(frame);
        }),
      );

      // Act: the platform's stream opens with the TwiML's parameters, and the caller says nothing
      ws.send(JSON.stringify(twilioSide.connected()));
      ws.send(JSON.stringify(twilioSide.start(parameters)));
      const first = await media;
      const closed = new Promise((resolve) => ws.once('close', resolve));
      ws.send(JSON.stringify(twilioSide.stop()));
      await closed;

      // Assess
      expect(first['streamSid']).toBe(twilioSide.streamSid);
      expect(outsideTwilioSchema(frames)).toEqual([]);
    });

    it('gives the call a token for its agent alone: another agent, another channel or the API refuse it', async () => {
      // Prepare: two voice agents of the owner, a phone channel on the first
      const agentOf = async (agentName: string) =>
        (
          await platform.api('POST', '/agent/create', {
            token: owner.token,
            body: { agentName, description: 'voice', sourceCode: fixture('bidi_echo_agent'), agentType: 'bidi' },
          })
        ).body.data.agentId as string;
      const [first, second] = [await agentOf('scoped-voice-1'), await agentOf('scoped-voice-2')];
      const channel = await channelOf({ platform: 'phone-voice', agentId: first, platformConfig: phoneConfig });
      const other = await channelOf({ platform: 'phone-voice', agentId: second, platformConfig: phoneConfig });
      const { streamUrl, parameters } = streamOf((await twilioPost(channel, callParams('in-3', '+15550004444'))).text);
      const closeCodeOf = async (url: string, customParameters: Record<string, string>) => {
        const twilioSide = twilioMediaStream({ seed: 'in-3', accountSid });
        const ws = new WebSocket(url);
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
        ws.send(JSON.stringify(twilioSide.connected()));
        ws.send(JSON.stringify(twilioSide.start(customParameters)));
        return closed;
      };

      // Act
      const otherAgent = await closeCodeOf(streamUrl.replace(first, second), parameters);
      const otherChannel = await closeCodeOf(streamUrl, { ...parameters, channelId: other.channelId });
      const api = await platform.api('GET', '/user/info', { token: parameters['token']! });

      // Assess
      expect(otherAgent).toBe(4403);
      expect(otherChannel).toBe(4403);
      expect(api.status).toBe(403);
    });

    it('sends a manual SMS and places a call against the phone stand-in', async () => {
      // Prepare
      const sms = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });
      const unified = await channelOf({ platform: 'phone-unified', agentId: voiceId, platformConfig: phoneConfig });
      const chat = await channelOf({ platform: 'webhook', platformConfig: {} });

      // Act
      const sent = await platform.api('POST', `/channels/${sms.channelId}/send`, { token: owner.token, body: { to: '+15550005555', message: 'manual hello' } });
      const called = await platform.api('POST', `/channels/${unified.channelId}/call`, { token: owner.token, body: { to: '+15550006666' } });
      const callFromSms = await platform.api('POST', `/channels/${sms.channelId}/call`, { token: owner.token, body: { to: '+15550006666' } });
      const sendFromChat = await platform.api('POST', `/channels/${chat.channelId}/send`, { token: owner.token, body: { to: 'x', message: 'y' } });

      // Assess
      expect(sent.body.data).toEqual({ messageId: 'SM123', to: '+15550005555' });
      expect(called.body.data).toEqual({ callId: 'CA123', to: '+15550006666', status: 'queued' });
      const call = new URLSearchParams(stand.phone.to('/Calls.json')[0]!.body);
      expect(call.get('To')).toBe('+15550006666');
      expect(call.get('From')).toBe('+15557654321');
      expect(call.get('Twiml')).toContain('/ws/twilio/');
      expect(callFromSms.status).toBe(400);
      expect(sendFromChat.status).toBe(400);
    });
  });
});
