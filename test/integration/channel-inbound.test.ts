import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receivedUrls } from '../../functions/channels/inbound.service.ts';
import { verifyInbound } from '../../functions/channels/platforms.ts';
import {
  metaRequest,
  slackEventCallback,
  slackRequest,
  twilioRequest,
  twilioSid,
  twilioSmsParams,
  twilioVoiceParams,
  whatsappTextNotification,
} from '../support/channel-signing.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
type User = Awaited<ReturnType<typeof createUser>>;

/** What a service stand-in answers one request with; `drop` closes the connection unanswered (unreachable). */
type Answer = { readonly status: number; readonly body: unknown } | 'drop';
interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/**
 * A loopback stand-in of one outside service's API: records every request and answers what
 * `answer` says for it (the service's success shape by default, its documented error shapes where
 * a test sets them), so the platform's failure handling meets the services' real error bodies.
 */
async function startService(answer: (request: Received) => Answer) {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      const reply = answer(entry);
      if (reply === 'drop') return void request.socket.destroy();
      response.writeHead(reply.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    to: (part: string) => received.filter((r) => r.path.includes(part)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
type Service = Awaited<ReturnType<typeof startService>>;

/** Meta's notification of one text message, signed as Meta signs it (`X-Hub-Signature-256`). */
const metaDelivery = (appSecret: string, phoneNumberId: string, messageId: string, from: string, text: string) =>
  metaRequest(appSecret, whatsappTextNotification({ phoneNumberId, from, name: 'Sender', messageId, text }));

/** Inbound URLs, channel failures and the agent a call needs, over real HTTP (issue 31). */
describe('channel inbound URLs and failures', () => {
  let platform: TestPlatform;
  let owner: User;
  let echoId: string;
  let voiceId: string;
  let raisingId: string;
  const services = {} as Record<'slack' | 'telegram' | 'meta' | 'twilio', Service>;

  const api = (method: string, path: string, body?: unknown) => platform.api(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) });
  const createAgent = async (agentName: string, sourceCode: string, agentType: 'text' | 'bidi' = 'text') => {
    const res = await api('POST', '/agent/create', { agentName, description: agentName, sourceCode, agentType });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  };
  const channelOf = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/channels', { name: `ch ${String(body['platform'])}`, agentId: echoId, ...body });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { channelId: string; webhookUrl: string };
  };
  /** The path and query of a URL the API gave: what a service requests on this platform. */
  const target = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  const channelState = async (channelId: string) => (await api('GET', `/channels/${channelId}`)).body.data;
  const logsOf = async (channelId: string) => (await api('GET', `/logs?resourceId=${channelId}`)).body.data.logs as Array<Record<string, any>>;
  const settle = () => platform.running.tasks.idle();

  beforeAll(async () => {
    services.slack = await startService((r) =>
      r.headers['authorization'] === 'Bearer xoxb-not-in-channel'
        ? { status: 200, body: { ok: false, error: 'not_in_channel' } }
        : { status: 200, body: { ok: true } },
    );
    services.telegram = await startService((r) => {
      if (r.path.includes('unreachable')) return 'drop';
      // Telegram's refusal; this one quotes the token and a URL back, as error texts sometimes do.
      if (r.path.includes('revoked'))
        return {
          status: 401,
          body: { ok: false, error_code: 401, description: `Unauthorized: bot ${r.path.split('/')[1]} at https://api.telegram.org${r.path}` },
        };
      return { status: 200, body: { ok: true, result: true, description: 'Webhook was set' } };
    });
    services.meta = await startService((r) =>
      r.path.includes('/999000999/')
        ? {
            status: 401,
            body: { error: { message: 'Error validating access token: Session has expired.', type: 'OAuthException', code: 190, fbtrace_id: 'Ab1' } },
          }
        : { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: '1', wa_id: '1' }], messages: [{ id: 'wamid.out' }] } },
    );
    services.twilio = await startService((r) => {
      if (r.body.includes('To=%2B15550000000'))
        return {
          status: 400,
          body: {
            code: 21211,
            message: "The 'To' number +15550000000 is not a valid phone number.",
            more_info: 'https://www.twilio.com/docs/errors/21211',
            status: 400,
          },
        };
      return { status: 201, body: r.path.endsWith('/Calls.json') ? { sid: 'CA-out', status: 'queued' } : { sid: 'SM-out', status: 'queued' } };
    });
    platform = await startTestPlatform({
      env: {
        CHANNEL_API_BASE_WORKSPACE_CHAT: `${services.slack.url}/api`,
        CHANNEL_API_BASE_BOT_MESSENGER: services.telegram.url,
        CHANNEL_API_BASE_PHONE_MESSENGER: `${services.meta.url}/v21.0`,
        CHANNEL_API_BASE_PHONE: services.twilio.url,
      },
    });
    owner = await createUser(platform, { alias: 'inbound-owner', credits: 500 });
    echoId = await createAgent('inbound-echo', fixture('echo_agent'));
    raisingId = await createAgent('inbound-raising', fixture('raising_agent'));
    voiceId = await createAgent('inbound-voice', fixture('bidi_echo_agent'), 'bidi');
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await Promise.all(Object.values(services).map((s) => s.close()));
  });

  describe('WhatsApp on one Callback URL', () => {
    const messengerConfig = (phoneNumberId: string) => ({
      verifyToken: 'verify-me',
      accessToken: 'wa-access-token',
      phoneNumberId,
      appSecret: 'wa-app-secret-0001',
    });

    it('answers Meta’s verification GET and its signed delivery POST on the webhookUrl the API returned', async () => {
      // Prepare: the one URL a user pastes into Meta's Callback URL field
      const channel = await channelOf({ platform: 'phone-messenger', platformConfig: messengerConfig('1000000001') });
      const callbackUrl = channel.webhookUrl;
      const delivered = metaDelivery('wa-app-secret-0001', '1000000001', 'wamid.one-url', '15550001111', 'hello on one url');
      const forgedDelivery = metaDelivery('another-secret', '1000000001', 'wamid.forged', '15550001111', 'forged');

      // Act
      const verification = await platform.api('GET', `${target(callbackUrl)}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=verify-me`);
      const delivery = await platform.api('POST', target(callbackUrl), delivered);
      await settle();
      const forged = await platform.api('POST', target(callbackUrl), forgedDelivery);

      // Assess
      expect(callbackUrl).toMatch(/\/channels\/inbound\/ch-\w+\/phone-messenger$/);
      expect(verification.status, verification.text).toBe(200);
      expect(verification.text).toBe('1158201444');
      expect(delivery.status, delivery.text).toBe(200);
      const sent = services.meta.to('/v21.0/1000000001/messages');
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0]!.body)).toMatchObject({ to: '15550001111', text: { body: 'echo: hello on one url' } });
      expect(forged.status).toBe(401);
    });

    it('answers both methods on the whatsapp alias as well', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'phone-messenger', platformConfig: messengerConfig('1000000002') });
      const alias = target(channel.webhookUrl).replace(/phone-messenger$/, 'whatsapp');
      const delivered = metaDelivery('wa-app-secret-0001', '1000000002', 'wamid.alias', '15550002222', 'hello on the alias');

      // Act
      const verification = await platform.api('GET', `${alias}?hub.mode=subscribe&hub.challenge=42&hub.verify_token=verify-me`);
      const wrongToken = await platform.api('GET', `${alias}?hub.mode=subscribe&hub.challenge=42&hub.verify_token=guess`);
      const delivery = await platform.api('POST', alias, delivered);
      await settle();

      // Assess
      expect(verification.text).toBe('42');
      expect(wrongToken.status).toBe(401);
      expect(delivery.status, delivery.text).toBe(200);
      expect(services.meta.to('/v21.0/1000000002/messages')).toHaveLength(1);
    });

    it('answers a GET on another platform’s URL with 405 naming POST, and on another platform’s channel under the alias with 404', async () => {
      // Prepare
      const slack = await channelOf({ platform: 'workspace-chat', platformConfig: { signingSecret: 'slack-secret', botToken: 'xoxb-ok' } });

      // Act
      const get = await platform.api('GET', target(slack.webhookUrl));
      const alias = await platform.api('GET', `${target(slack.webhookUrl).replace(/workspace-chat$/, 'whatsapp')}?hub.mode=subscribe`);

      // Assess
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      expect(get.body.error).toContain('use POST');
      expect(alias.status).toBe(404);
    });

    it('refuses a messenger channel without the appSecret that checks Meta’s signature', async () => {
      // Act
      const res = await api('POST', '/channels', {
        name: 'no secret',
        platform: 'phone-messenger',
        agentId: echoId,
        platformConfig: { verifyToken: 'v', accessToken: 'a', phoneNumberId: '1000000003' },
      });

      // Assess
      expect(res.status).toBe(400);
      expect(res.text).toContain('platformConfig.appSecret');
    });
  });

  describe('Twilio signatures over the URL as received', () => {
    const authToken = 'twilio-auth-token-query';
    const phoneConfig = { accountSid: twilioSid('AC', 'query'), authToken, phoneNumber: '+15557654321' };
    const sms = (messageSid: string) =>
      twilioSmsParams({ accountSid: phoneConfig.accountSid, messageSid, from: '+15550003333', to: phoneConfig.phoneNumber, body: 'hi' });

    it.each([
      ['%20 and ~', '?note=a%20b&tag=~x'],
      ['+ and %7E', '?note=a+b&tag=%7Ex'],
      ['%20 and %7E together', '?note=a%20b&tag=%7Ex'],
    ])('accepts a webhook URL whose query holds %s, signed by Twilio’s library', async (_, query) => {
      // Prepare: the URL the owner configured at Twilio, the webhookUrl with their own query
      const channel = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });
      const url = `${channel.webhookUrl}${query}`;
      const params = sms(twilioSid('SM', `${query}:${channel.channelId}`));
      const signed = twilioRequest(authToken, url, params);
      const replies = () => services.twilio.to(`/Accounts/${phoneConfig.accountSid}/Messages.json`).length;
      const before = replies();

      // Act
      const res = await platform.api('POST', target(url), signed);
      await settle();

      // Assess
      expect(twilio.validateRequest(authToken, signed.headers['x-twilio-signature']!, url, params)).toBe(true);
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/xml');
      expect(replies()).toBe(before + 1);
    });

    it('refuses a signature made for another query', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'phone-sms', platformConfig: phoneConfig });
      const signed = twilioRequest(authToken, `${channel.webhookUrl}?note=a%20b`, sms(twilioSid('SM', 'other-query')));

      // Act
      const res = await platform.api('POST', `${target(channel.webhookUrl)}?note=a%20c`, signed);

      // Assess
      expect(res.status).toBe(401);
    });
  });

  describe('Twilio signatures where the raw query is lost (API Gateway REST)', () => {
    const authToken = 'twilio-auth-token-rest';
    const page = 'https://abc.execute-api.us-east-1.amazonaws.com/prod/channels/inbound/ch-000000000000000000001/phone-sms';
    const params = twilioSmsParams({
      accountSid: twilioSid('AC', 'rest'),
      messageSid: twilioSid('SM', 'rest'),
      from: '+15550003333',
      to: '+15557654321',
      body: 'hi',
    });
    const verifies = (query: string, decoded: Record<string, string>) => {
      const signed = twilioRequest(authToken, `${page}${query}`, params);
      const request = {
        method: 'POST',
        headers: signed.headers,
        query: decoded,
        body: Buffer.from(signed.rawBody),
        urls: receivedUrls(page, { query: decoded }),
        nowSec: 0,
      };
      return verifyInbound('phone-sms', request, { authToken });
    };

    it.each([
      ['RFC 3986 (%20, ~)', '?note=a%20b&tag=~x'],
      ['the form encoding (+, %7E)', '?note=a+b&tag=%7Ex'],
    ])('accepts a URL written in %s from the decoded parameters alone', (_, query) => {
      // Act, Assess
      expect(verifies(query, { note: 'a b', tag: '~x' })).toBe(true);
    });

    it('refuses a signature over other parameters', () => {
      // Act, Assess
      expect(verifies('?note=a%20b&tag=~x', { note: 'a c', tag: '~x' })).toBe(false);
    });
  });

  describe('calls need a voice agent', () => {
    const phoneConfig = { accountSid: twilioSid('AC', 'calls'), authToken: 'twilio-auth-token-calls', phoneNumber: '+15557650000' };
    const call = (channel: { webhookUrl: string }, seed: string) => {
      const params = twilioVoiceParams({
        accountSid: phoneConfig.accountSid,
        callSid: twilioSid('CA', seed),
        from: '+15550004444',
        to: phoneConfig.phoneNumber,
      });
      return platform.api('POST', target(channel.webhookUrl), twilioRequest(phoneConfig.authToken, channel.webhookUrl, params));
    };
    const placedCalls = () => services.twilio.to(`/Accounts/${phoneConfig.accountSid}/Calls.json`).length;

    it('refuses a phone-voice channel on a text agent, at create and when an update points it at one', async () => {
      // Prepare
      const voice = await channelOf({ platform: 'phone-voice', agentId: voiceId, platformConfig: phoneConfig });

      // Act
      const created = await api('POST', '/channels', { name: 'voice on text', platform: 'phone-voice', agentId: echoId, platformConfig: phoneConfig });
      const updated = await api('PUT', `/channels/${voice.channelId}`, { agentId: echoId });

      // Assess
      for (const res of [created, updated]) {
        expect(res.status).toBe(400);
        expect(res.body.error).toContain('phone-voice');
        expect(res.body.error).toContain('voice agent');
      }
      expect((await channelState(voice.channelId)).agentId).toBe(voiceId);
    });

    it('places a call for a voice agent, and refuses /call with 400 on a unified number whose agent is a text one', async () => {
      // Prepare
      const voice = await channelOf({ platform: 'phone-voice', agentId: voiceId, platformConfig: phoneConfig });
      const unified = await channelOf({ platform: 'phone-unified', agentId: echoId, platformConfig: phoneConfig });
      const before = placedCalls();

      // Act
      const placed = await api('POST', `/channels/${voice.channelId}/call`, { to: '+15550006666' });
      const refused = await api('POST', `/channels/${unified.channelId}/call`, { to: '+15550006666' });

      // Assess
      expect(placed.status, placed.text).toBe(200);
      expect(placed.body.data).toMatchObject({ callId: 'CA-out', status: 'queued' });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain('text agent');
      expect(placedCalls()).toBe(before + 1);
    });

    it('tells a caller of a unified number on a text agent that it takes messages only, with no voice token', async () => {
      // Prepare
      const unified = await channelOf({ platform: 'phone-unified', agentId: echoId, platformConfig: phoneConfig });

      // Act
      const res = await call(unified, 'CA-unified-text');

      // Assess
      expect(res.status).toBe(200);
      expect(res.text).toContain('<Say>This number takes text messages only.</Say><Hangup/>');
      expect(res.text).not.toContain('<Stream');
      expect(res.text).not.toContain('svc_run_');
    });
  });

  describe('lastError and the service named', () => {
    it('keeps a refused reply as lastError naming Slack and its error code, on the channel, in the list and in the owner’s logs', async () => {
      // Prepare: a Slack app whose bot is not in the conversation it is asked to answer in
      const signingSecret = 'slack-signing-secret-last-error';
      const channel = await channelOf({ platform: 'workspace-chat', platformConfig: { signingSecret, botToken: 'xoxb-not-in-channel' } });
      const event = slackEventCallback('EvLastError1', { type: 'message', user: 'U9', text: 'hello', channel: 'D9', channel_type: 'im', ts: '9.1' });

      // Act
      const ack = await platform.api('POST', target(channel.webhookUrl), slackRequest(signingSecret, event));
      await settle();
      const state = await channelState(channel.channelId);
      const listed = (await api('GET', '/channels?limit=100')).body.data.channels.find((c: { channelId: string }) => c.channelId === channel.channelId);
      const logs = await logsOf(channel.channelId);

      // Assess
      expect(ack.status).toBe(200);
      expect(state.failureCount).toBe(1);
      expect(state.lastError).toMatchObject({ code: 'CHANNEL_PLATFORM_REFUSED', message: 'Slack refused the reply (HTTP 200, not_in_channel).' });
      expect(Date.parse(state.lastError.at)).toBeGreaterThan(0);
      expect(listed.lastError).toEqual(state.lastError);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ resourceType: 'channel', requestType: 'CHANNEL_REPLY', status: 'error', error: { code: 'CHANNEL_PLATFORM_REFUSED' } });
      expect(logs[0]!['error'].message).toContain('Slack refused the reply');
    });

    it('names WhatsApp (Meta) and its error when the reply is refused, and keeps an agent run’s failure', async () => {
      // Prepare: an expired access token at Meta; and a channel whose agent raises
      const appSecret = 'wa-app-secret-0002';
      const expired = await channelOf({
        platform: 'phone-messenger',
        platformConfig: { verifyToken: 'v', accessToken: 'wa-expired-access-token', phoneNumberId: '999000999', appSecret },
      });
      const raising = await channelOf({
        platform: 'phone-messenger',
        agentId: raisingId,
        platformConfig: { verifyToken: 'v', accessToken: 'wa-access-token', phoneNumberId: '1000000004', appSecret },
      });
      // Act
      await platform.api('POST', target(expired.webhookUrl), metaDelivery(appSecret, '999000999', 'wamid.expired', '15550005555', 'hi'));
      await platform.api('POST', target(raising.webhookUrl), metaDelivery(appSecret, '1000000004', 'wamid.raising', '15550005555', 'hi'));
      await settle();
      const refused = await channelState(expired.channelId);
      const failed = await channelState(raising.channelId);

      // Assess
      expect(refused.lastError).toMatchObject({
        code: 'CHANNEL_PLATFORM_REFUSED',
        message: 'WhatsApp (Meta) refused the reply (HTTP 401, error 190: Error validating access token: Session has expired.).',
      });
      expect(failed.failureCount).toBe(1);
      expect(failed.lastError.message).toMatch(/^The agent run failed: /);
      expect((await logsOf(raising.channelId)).map((log) => log['requestType'])).toContain('CHANNEL_AGENT_RUN');
    });

    it('keeps a webhook channel’s failed run as lastError without counting it: its caller was answered with the error', async () => {
      // Prepare
      const channel = await channelOf({ platform: 'webhook', agentId: raisingId, platformConfig: {} });

      // Act
      const res = await platform.api('POST', target(channel.webhookUrl), { body: { senderId: 'alice', message: 'hi', messageId: 'm-raise-1' } });
      const state = await channelState(channel.channelId);

      // Assess
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(state.failureCount).toBe(0);
      expect(state.lastError.message).toMatch(/^The agent run failed: /);
      expect(state.lastError.code).toBe(res.body.code);
    });

    it('says Telegram could not be reached or refused setWebhook, at create and at update, without the bot token or a URL', async () => {
      // Prepare
      const good = await channelOf({ platform: 'bot-messenger', platformConfig: { botToken: '100:good-bot-token' } });
      const revokedToken = '200:revoked-bot-token-abcdef';

      // Act
      const unreachable = await api('POST', '/channels', {
        name: 'tg',
        platform: 'bot-messenger',
        agentId: echoId,
        platformConfig: { botToken: '300:unreachable-token' },
      });
      const refused = await api('POST', '/channels', { name: 'tg', platform: 'bot-messenger', agentId: echoId, platformConfig: { botToken: revokedToken } });
      const update = await api('PUT', `/channels/${good.channelId}`, { platformConfig: { botToken: revokedToken } });
      const state = await channelState(good.channelId);
      const logs = await logsOf(good.channelId);

      // Assess
      expect(unreachable.status).toBe(502);
      expect(unreachable.body.error).toBe('Telegram could not be reached (setWebhook).');
      for (const res of [refused, update]) {
        expect(res.status).toBe(502);
        expect(res.body.error).toMatch(/^Telegram refused setWebhook \(HTTP 401, Unauthorized: bot \S+ at \[URL\]\)\.$/);
        expect(res.text).not.toContain('revoked-bot-token');
      }
      expect(state.lastError.message).toBe(update.body.error);
      expect(state.platformConfig.botToken).toBe('****oken');
      expect(logs.map((log) => log['requestType'])).toEqual(['CHANNEL_WEBHOOK_REGISTRATION']);
      expect(JSON.stringify(logs)).not.toContain('revoked-bot-token');
    });

    it('names Twilio and its error code when it refuses a manual SMS, without its help URL', async () => {
      // Prepare
      const channel = await channelOf({
        platform: 'phone-sms',
        platformConfig: { accountSid: twilioSid('AC', 'sms-refused'), authToken: 'twilio-auth-token-sms', phoneNumber: '+15557651111' },
      });

      // Act
      const res = await api('POST', `/channels/${channel.channelId}/send`, { to: '+15550000000', message: 'hello' });

      // Assess
      expect(res.status).toBe(502);
      expect(res.body.error).toBe("Twilio refused the SMS (HTTP 400, error 21211: The 'To' number +15550000000 is not a valid phone number.).");
    });
  });
});
