/**
 * The local platform behind a tunnel (README, "Try a real Slack, Telegram, Twilio or WhatsApp
 * channel from your laptop"): every URL it gives an outside service or a client is on the public
 * URL (PUBLIC_URL), or on the one a trusted proxy forwards (TRUST_FORWARDED_HEADERS), and Twilio's
 * signature is checked over the URL Twilio called. The tunnel is a loopback reverse proxy that,
 * like cloudflared or ngrok, forwards to the platform with the public name as Host and
 * `X-Forwarded-Proto: https`, passing the client's other headers on; Telegram's and Twilio's APIs
 * are loopback stand-ins; Twilio's deliveries are signed with the `twilio` package.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute, defineStreamRoute } from '../../functions/core/http/route.ts';
import { importFromSource, type ImportHandlerModule } from '../../lib/local/handlers.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import { areas } from '../../lib/manifest/index.ts';
import { twilioSid, twilioSmsParams, twilioVoiceParams } from '../support/channel-signing.ts';
import { callApi, createUser, startTestPlatform, type ApiOptions, type TestPlatform } from '../support/local-platform.ts';
import { startStandIn, type StandIn } from '../support/platform-stand-in.ts';

const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
type User = Awaited<ReturnType<typeof createUser>>;

/** A tunnel's edge on loopback: what reaches `url` goes to the platform as if sent to `https://{host}`. */
interface Tunnel {
  readonly url: string;
  readonly host: string;
  readonly publicUrl: string;
  forwardTo(target: string): void;
  close(): Promise<void>;
}

async function startTunnel(host: string): Promise<Tunnel> {
  let target = '';
  const server: Server = createServer((req, res) => {
    const upstream = httpRequest(
      `${target}${req.url ?? '/'}`,
      { method: req.method, headers: { ...req.headers, host, 'x-forwarded-proto': 'https', 'x-forwarded-for': req.socket.remoteAddress ?? '' } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    host,
    publicUrl: `https://${host}`,
    forwardTo: (url) => void (target = url),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Echoes what a handler is told of the request's URL, on the base host (buffered) and the streaming host (a function URL's event). */
const urlEchoArea = defineArea({
  name: 'url-echo',
  folder: 'test/integration/url-echo',
  routes: [
    { method: 'GET', path: '/url-echo', handler: 'echo', auth: 'public', callers: 'role' },
    { method: 'GET', path: '/url-echo', host: 'stream', mode: 'streaming', handler: 'echo-stream', auth: 'public', callers: 'role' },
  ],
});
const echoed = (ctx: { request: { rawQuery?: string; baseUrl: string }; urls: unknown }) => ({
  rawQuery: ctx.request.rawQuery ?? null,
  urls: ctx.urls,
});
const importWithUrlEcho: ImportHandlerModule = async (path) => {
  if (path === 'test/integration/url-echo/handlers/echo.handler.ts') return { default: defineRoute({ run: async (ctx) => echoed(ctx) }) };
  if (path === 'test/integration/url-echo/handlers/echo-stream.handler.ts')
    return {
      default: defineStreamRoute({
        run: async (ctx, stream) => {
          stream.start(200, { 'content-type': 'application/json' });
          await stream.write(JSON.stringify(echoed(ctx)));
          await stream.end();
        },
      }),
    };
  return importFromSource(path);
};

describe('the local platform behind a tunnel', () => {
  const authToken = 'twilio-auth-token-tunnel';
  const accountSid = twilioSid('AC', 'tunnel-owner');
  const phoneConfig = { accountSid, authToken, phoneNumber: '+15557650000' };
  let telegram: StandIn;
  let phone: StandIn;
  let tunnel: Tunnel;
  /** Started with PUBLIC_URL: the tunnel's public URL. */
  let tunneled: TestPlatform;
  /** Started with neither setting: the local URLs, whatever a client's headers say. */
  let direct: TestPlatform;
  /** Started with TRUST_FORWARDED_HEADERS, without PUBLIC_URL: each request's URLs come from its proxy. */
  let trusting: TestPlatform;
  let trustingTunnel: Tunnel;
  const owners = new Map<TestPlatform, User>();
  const agents = new Map<TestPlatform, { echo: string; voice: string }>();

  const env = () => ({ CHANNEL_API_BASE_BOT_MESSENGER: telegram.url, CHANNEL_API_BASE_PHONE: phone.url });
  const prepare = async (platform: TestPlatform, alias: string) => {
    const owner = await createUser(platform, { alias, credits: 100 });
    const agent = async (agentName: string, sourceCode: string, agentType?: 'bidi') => {
      const res = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName, description: agentName, sourceCode, agentType } });
      expect(res.status, res.text).toBe(200);
      return res.body.data.agentId as string;
    };
    owners.set(platform, owner);
    agents.set(platform, {
      echo: await agent(`${alias}-echo`, fixture('echo_agent')),
      voice: await agent(`${alias}-voice`, fixture('bidi_echo_agent'), 'bidi'),
    });
  };
  /** One call to `platform`, through `via` (a tunnel) or straight to its loopback port. */
  const call = (platform: TestPlatform, via: Tunnel | null, method: string, path: string, options: ApiOptions = {}) =>
    callApi(via?.url ?? platform.url, method, path, options);
  const createChannel = async (platform: TestPlatform, via: Tunnel | null, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await call(platform, via, 'POST', '/channels', {
      token: owners.get(platform)!.token,
      body: { name: `ch ${String(body['platform'])}`, agentId: agents.get(platform)!.echo, ...body },
      headers,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { channelId: string; webhookUrl: string };
  };
  /** A delivery as Twilio sends it: form-encoded, signed with the `twilio` package for the URL Twilio called. */
  const twilioDelivery = (signedUrl: string, params: Record<string, string>, headers: Record<string, string> = {}): ApiOptions => ({
    rawBody: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, signedUrl, { ...params }),
      ...headers,
    },
  });
  const sms = (seed: string, body: string) =>
    twilioSmsParams({ accountSid, messageSid: twilioSid('SM', seed), from: '+15550001234', to: phoneConfig.phoneNumber, body });

  beforeAll(async () => {
    telegram = await startStandIn();
    phone = await startStandIn({ '/Messages.json': { sid: 'SM123', status: 'queued' } });
    tunnel = await startTunnel('tunnel-one.example.test');
    trustingTunnel = await startTunnel('tunnel-two.example.test');
    [tunneled, direct, trusting] = await Promise.all([
      startTestPlatform({ env: { ...env(), PUBLIC_URL: `${tunnel.publicUrl}/` } }),
      startTestPlatform({ env: env(), areas: [...areas, urlEchoArea], importHandlerModule: importWithUrlEcho }),
      startTestPlatform({ env: { ...env(), TRUST_FORWARDED_HEADERS: 'true' } }),
    ]);
    tunnel.forwardTo(tunneled.url);
    trustingTunnel.forwardTo(trusting.url);
    await Promise.all([prepare(tunneled, 'tunnel-owner'), prepare(direct, 'direct-owner'), prepare(trusting, 'trusting-owner')]);
  });
  afterAll(async () => {
    await Promise.all([tunneled, direct, trusting].map((platform) => platform?.stop({ removeData: true })));
    await Promise.all([telegram, phone, tunnel, trustingTunnel].map((server) => server?.close()));
  });

  describe('with PUBLIC_URL', () => {
    it('registers a Telegram webhook on the public URL and answers it as webhookUrl, however the owner reached the API', async () => {
      // Act
      const throughTunnel = await createChannel(tunneled, tunnel, { platform: 'bot-messenger', platformConfig: { botToken: '101:tunnel' } });
      const fromLoopback = await createChannel(tunneled, null, { platform: 'bot-messenger', platformConfig: { botToken: '102:loopback' } });
      const listed = await call(tunneled, null, 'GET', `/channels/${fromLoopback.channelId}`, { token: owners.get(tunneled)!.token });

      // Assess
      const registered = (token: string) => telegram.to(`/bot${token}/setWebhook`).map((r) => (JSON.parse(r.body) as { url: string }).url);
      expect(throughTunnel.webhookUrl).toBe(`https://tunnel-one.example.test/channels/inbound/${throughTunnel.channelId}/bot-messenger`);
      expect(registered('101:tunnel')).toEqual([throughTunnel.webhookUrl]);
      expect(fromLoopback.webhookUrl).toBe(`https://tunnel-one.example.test/channels/inbound/${fromLoopback.channelId}/bot-messenger`);
      expect(registered('102:loopback')).toEqual([fromLoopback.webhookUrl]);
      expect(listed.body.data.webhookUrl).toBe(fromLoopback.webhookUrl);
    });

    it('answers a call with TwiML that streams to the public voice host over wss', async () => {
      // Prepare
      const voice = agents.get(tunneled)!.voice;
      const channel = await createChannel(tunneled, null, { platform: 'phone-voice', agentId: voice, platformConfig: phoneConfig });
      const params = twilioVoiceParams({ accountSid, callSid: twilioSid('CA', 'tunnel-call'), from: '+15550004321', to: phoneConfig.phoneNumber });

      // Act
      const res = await call(tunneled, tunnel, 'POST', new URL(channel.webhookUrl).pathname, twilioDelivery(channel.webhookUrl, params));

      // Assess
      expect(res.status, res.text).toBe(200);
      expect(/<Stream url="([^"]+)">/.exec(res.text)?.[1]).toBe(`wss://tunnel-one.example.test/voice/ws/twilio/${voice}`);
    });

    it('accepts a Twilio SMS signed for the public URL and refuses one signed for the loopback URL', async () => {
      // Prepare
      const channel = await createChannel(tunneled, null, { platform: 'phone-sms', platformConfig: phoneConfig });
      const path = new URL(channel.webhookUrl).pathname;

      // Act
      const forPublic = await call(tunneled, tunnel, 'POST', path, twilioDelivery(channel.webhookUrl, sms('public-1', 'hi through the tunnel')));
      const forLoopback = await call(tunneled, tunnel, 'POST', path, twilioDelivery(`${tunneled.url}${path}`, sms('loopback-1', 'hi')));

      // Assess
      expect(channel.webhookUrl).toBe(`${tunnel.publicUrl}${path}`);
      expect(forPublic.status, forPublic.text).toBe(200);
      expect(forLoopback.status).toBe(401);
    });

    it('lists every served host on the public URL in discovery, voice as wss', async () => {
      // Act
      const res = await call(tunneled, null, 'GET', '/.well-known/platform.json');

      // Assess
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        baseUrl: 'https://tunnel-one.example.test',
        streamUrl: 'https://tunnel-one.example.test/stream',
        mcpUrl: 'https://tunnel-one.example.test',
        voiceUrl: 'wss://tunnel-one.example.test/voice',
        cdnUrl: 'https://tunnel-one.example.test/cdn',
      });
    });

    it("gives agents the platform's own loopback address, so their calls to it never go out through the tunnel", async () => {
      // Prepare: an agent that answers with the platform MCP address its run was given
      const owner = owners.get(tunneled)!;
      const source = [
        'class Agent:',
        '    messages = []',
        '    async def stream_async(self, prompt):',
        '        yield {"data": SVC_PLATFORM_MCP_URL}',
        'def create_agent():',
        '    return Agent(), []',
      ].join('\n');
      const created = await tunneled.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'mcp-address', description: 'd', sourceCode: source },
      });
      expect(created.status, created.text).toBe(200);

      // Act
      const res = await tunneled.api('POST', `/agent/${created.body.data.agentId as string}/chat`, { token: owner.token, body: { prompt: 'where?' } });

      // Assess
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain(`${tunneled.url}/mcp/platform`);
      expect(res.text).not.toContain('tunnel-one.example.test');
    });
  });

  describe('forwarded headers', () => {
    const forged = { 'x-forwarded-host': 'forged.example.test', 'x-forwarded-proto': 'https', forwarded: 'host=forged.example.test;proto=https' };

    it("change nothing when the operator does not trust them: a client's forged host gets the local URLs and its signature is refused", async () => {
      // Prepare
      const channel = await createChannel(direct, null, { platform: 'phone-sms', platformConfig: phoneConfig }, forged);
      const path = new URL(channel.webhookUrl).pathname;

      // Act
      const discovery = await call(direct, null, 'GET', '/.well-known/platform.json', { headers: forged });
      const signedForForged = await call(direct, null, 'POST', path, twilioDelivery(`https://forged.example.test${path}`, sms('forged-1', 'x'), forged));
      const signedForLocal = await call(direct, null, 'POST', path, twilioDelivery(`${direct.url}${path}`, sms('local-1', 'hi'), forged));

      // Assess
      expect(channel.webhookUrl).toBe(`${direct.url}${path}`);
      expect(discovery.body.data).toMatchObject({
        baseUrl: direct.url,
        streamUrl: `${direct.url}/stream`,
        voiceUrl: `${direct.url.replace('http', 'ws')}/voice`,
      });
      expect(signedForForged.status).toBe(401);
      expect(signedForLocal.status, signedForLocal.text).toBe(200);
    });

    it("give each request's URLs when trusted: the tunnel's host, or a host the client forwards, every host on it", async () => {
      // Act
      const throughTunnel = await createChannel(trusting, trustingTunnel, { platform: 'bot-messenger', platformConfig: { botToken: '201:trusted' } });
      const discovery = await call(trusting, trustingTunnel, 'GET', '/.well-known/platform.json');
      const forwarded = await call(trusting, null, 'GET', '/.well-known/platform.json', {
        headers: { 'x-forwarded-host': 'other.example.test', 'x-forwarded-proto': 'https' },
      });
      const local = await call(trusting, null, 'GET', '/.well-known/platform.json');

      // Assess
      expect(throughTunnel.webhookUrl).toBe(`https://tunnel-two.example.test/channels/inbound/${throughTunnel.channelId}/bot-messenger`);
      expect(telegram.to('/bot201:trusted/setWebhook').map((r) => (JSON.parse(r.body) as { url: string }).url)).toEqual([throughTunnel.webhookUrl]);
      expect(discovery.body.data).toMatchObject({
        baseUrl: 'https://tunnel-two.example.test',
        streamUrl: 'https://tunnel-two.example.test/stream',
        mcpUrl: 'https://tunnel-two.example.test',
        voiceUrl: 'wss://tunnel-two.example.test/voice',
      });
      expect(forwarded.body.data).toMatchObject({ baseUrl: 'https://other.example.test', voiceUrl: 'wss://other.example.test/voice' });
      expect(local.body.data).toMatchObject({ baseUrl: trusting.url, voiceUrl: `${trusting.url.replace('http', 'ws')}/voice` });
    });

    it('check a trusted Twilio delivery against the URL the tunnel was sent to', async () => {
      // Prepare
      const channel = await createChannel(trusting, trustingTunnel, { platform: 'phone-sms', platformConfig: phoneConfig });
      const path = new URL(channel.webhookUrl).pathname;

      // Act
      const forPublic = await call(trusting, trustingTunnel, 'POST', path, twilioDelivery(channel.webhookUrl, sms('trusted-1', 'hi')));
      const forLoopback = await call(trusting, trustingTunnel, 'POST', path, twilioDelivery(`${trusting.url}${path}`, sms('trusted-2', 'hi')));

      // Assess
      expect(channel.webhookUrl).toBe(`https://tunnel-two.example.test${path}`);
      expect(forPublic.status, forPublic.text).toBe(200);
      expect(forLoopback.status).toBe(401);
    });
  });

  describe('the raw query', () => {
    it.each([
      ['the base host', '/url-echo'],
      ['the streaming host', '/stream/url-echo'],
    ])('reaches handlers on %s exactly as the client sent it', async (_host, path) => {
      // Prepare: escapes a re-encoding would change, a repeated name, an empty value.
      const query = 'a=%20b~c&a=%7e&plus=1+2&empty=&enc=%E2%98%80';

      // Act
      const withQuery = await call(direct, null, 'GET', `${path}?${query}`);
      const without = await call(direct, null, 'GET', path);

      // Assess
      expect(withQuery.status, withQuery.text).toBe(200);
      const data = (withQuery.body.data ?? withQuery.body) as { rawQuery: string };
      expect(data.rawQuery).toBe(query);
      expect(((without.body.data ?? without.body) as { rawQuery: string }).rawQuery).toBe('');
    });
  });
});
