import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
const ECHO = fixture('echo_agent');
const VOICE_ECHO = fixture('bidi_echo_agent');
const HISTORY = fixture('history_agent');
const PAGE = 'http://localhost:5173';

type User = Awaited<ReturnType<typeof createUser>>;

/** Embed tokens over HTTP against the real local platform (SPEC 4.10, parts 2, 3, 5.5 and 8). */
describe('embed tokens', () => {
  let platform: TestPlatform;
  let owner: User;
  let other: User;
  let echoId: string;
  let secondId: string;
  let voiceId: string;
  let othersPrivateId: string;
  let othersPublicId: string;
  let streamUrl: string;

  const createAgent = async (user: User, agentName: string, extra: Record<string, unknown> = {}) => {
    const res = await platform.api('POST', '/agent/create', { token: user.token, body: { agentName, description: agentName, sourceCode: ECHO, ...extra } });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  };
  const createEmbed = (body: Record<string, unknown>, user: User = owner) => platform.api('POST', '/embed/create', { token: user.token, body });
  const embedOf = async (body: Record<string, unknown>) => {
    const res = await createEmbed({ rateLimitPerIp: 1000, ...body });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { embedTokenId: string; embedToken: string };
  };
  const config = (token: string, origin?: string) =>
    platform.api('GET', `/embed/config?token=${encodeURIComponent(token)}`, origin === undefined ? {} : { headers: { origin } });
  const exchange = (token: string, origin = PAGE, visitorToken?: string) =>
    platform.api('POST', '/embed/chat', { body: { token, ...(visitorToken === undefined ? {} : { visitorToken }) }, headers: { origin } });
  const chat = (bearer: string, agentId: string, prompt: string) => callApi(streamUrl, 'POST', `/agent/${agentId}/chat`, { token: bearer, body: { prompt } });
  const credits = async (user: User): Promise<number> => (await platform.api('GET', '/user/credits', { token: user.token })).body.data.credits;

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'embed-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'embed-other', credits: 1000 });
    echoId = await createAgent(owner, 'embed-echo');
    secondId = await createAgent(owner, 'embed-second');
    voiceId = await createAgent(owner, 'embed-voice', { agentType: 'bidi', sourceCode: VOICE_ECHO });
    othersPrivateId = await createAgent(other, 'others-private');
    othersPublicId = await createAgent(other, 'others-public', { visibility: 'public' });
    streamUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.streamUrl;
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  describe('create', () => {
    it('issues a publishable token with a checksum, the detected mode, defaults and a ready script tag', async () => {
      // Act
      const res = await createEmbed({ agentId: echoId, greeting: 'Hi there' });

      // Assess
      expect(res.status, res.text).toBe(200);
      const data = res.body.data;
      expect(data.embedTokenId).toMatch(/^emb-[0-9A-Za-z]{21}$/);
      expect(data.embedToken).toMatch(/^emb_pk_live_[0-9A-Za-z]{46}$/);
      expect(data).toMatchObject({
        agentId: echoId,
        voiceAgentId: null,
        allowedDomains: ['localhost'],
        status: 'active',
        config: { greeting: 'Hi there', color: '#6366f1', position: 'bottom-right', mode: 'text', agentName: 'embed-echo', size: 'standard' },
      });
      const discovery = (await platform.api('GET', '/.well-known/platform.json')).body.data;
      expect(discovery.cdnUrl).toBeTruthy();
      expect(data.snippet).toContain(`src="${discovery.cdnUrl}/widget.js"`);
      expect(data.snippet).toContain(`data-token="${data.embedToken}"`);
      expect(data.snippet).toContain(`data-text-agent="${echoId}"`);
    });

    it.each([
      [{ voiceAgentId: 'VOICE' }, 'voice'],
      [{ agentId: 'TEXT', voiceAgentId: 'VOICE' }, 'both'],
    ])('detects the mode from the agents given (%j)', async (agents, mode) => {
      // Prepare
      const body = Object.fromEntries(Object.entries(agents).map(([field, which]) => [field, which === 'TEXT' ? echoId : voiceId]));

      // Act
      const res = await createEmbed(body);

      // Assess
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.config.mode).toBe(mode);
    });

    it('embeds a public agent of someone else, but not a private one', async () => {
      // Act
      const publicOne = await createEmbed({ agentId: othersPublicId });
      const privateOne = await createEmbed({ agentId: othersPrivateId });

      // Assess
      expect(publicOne.status, publicOne.text).toBe(200);
      expect(privateOne.status).toBe(400);
      expect(privateOne.text).toContain('agentId');
    });

    it.each([
      [{}, 'agentId'],
      [{ agentId: 'nope' }, 'agentId'],
      [{ agentId: 'VOICE' }, 'agentId'],
      [{ voiceAgentId: 'TEXT' }, 'voiceAgentId'],
      [{ agentId: 'TEXT', allowedDomains: ['not a domain'] }, 'allowedDomains'],
      [{ agentId: 'TEXT', allowedDomains: [] }, 'allowedDomains'],
      [{ agentId: 'TEXT', color: 'blue' }, 'color'],
      [{ agentId: 'TEXT', position: 'top' }, 'position'],
      [{ agentId: 'TEXT', size: 'huge' }, 'size'],
      [{ agentId: 'TEXT', autoOpenDelay: 30001 }, 'autoOpenDelay'],
      [{ agentId: 'TEXT', rateLimitPerIp: 0 }, 'rateLimitPerIp'],
      [{ agentId: 'TEXT', config: { mode: 'voice' } }, 'mode'],
    ])('answers 400 naming the field for %j', async (body, field) => {
      // Prepare
      const resolved = JSON.parse(JSON.stringify(body).replaceAll('"TEXT"', JSON.stringify(echoId)).replaceAll('"VOICE"', JSON.stringify(voiceId)));

      // Act
      const res = await createEmbed(resolved);

      // Assess
      expect(res.status, res.text).toBe(400);
      expect(res.text).toContain(field);
    });
  });

  describe('config and origins', () => {
    it('answers only pages whose Origin the token allows', async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: echoId, allowedDomains: ['shop.example.com', '*.example.org', 'localhost:5173'], color: '#112233' });

      // Act
      const allowed = await Promise.all(['https://shop.example.com', 'http://a.b.example.org', PAGE].map((origin) => config(embedToken, origin)));
      const refused = await Promise.all(
        ['https://evil.com', 'https://example.org', 'http://localhost:3000', 'https://shop.example.com.evil.com'].map((o) => config(embedToken, o)),
      );
      const noOrigin = await config(embedToken);

      // Assess
      for (const res of allowed) {
        expect(res.status, res.text).toBe(200);
        expect(res.body.data).toMatchObject({
          agentId: echoId,
          voiceAgentId: null,
          agentName: 'embed-echo',
          color: '#112233',
          position: 'bottom-right',
          mode: 'text',
        });
      }
      for (const res of [...refused, noOrigin]) {
        expect(res.status).toBe(403);
        expect(res.body.data).toBeUndefined();
        expect(res.text).not.toContain(echoId);
      }
    });

    it('answers any page for `*`, and 401 for unknown or malformed tokens', async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: echoId, allowedDomains: ['*'] });
      const forged = embedToken.slice(0, -1) + (embedToken.endsWith('a') ? 'b' : 'a');

      // Act
      const anyPage = await config(embedToken, 'https://anything.example');
      const bad = await config(forged, PAGE);
      const garbage = await config('hello', PAGE);

      // Assess
      expect(anyPage.status).toBe(200);
      expect(bad.status).toBe(401);
      expect(garbage.status).toBe(401);
    });

    it("takes a same-origin page (no Origin, Sec-Fetch-Site: same-origin) as the API's own origin, as the console's widget preview is", async () => {
      // Prepare
      const apiHost = new URL(platform.url).host;
      const { embedToken } = await embedOf({ agentId: echoId, allowedDomains: [apiHost] });
      const { embedToken: elsewhere } = await embedOf({ agentId: echoId, allowedDomains: ['localhost:5173'] });
      const get = (token: string, site: string) =>
        platform.api('GET', `/embed/config?token=${encodeURIComponent(token)}`, { headers: { 'sec-fetch-site': site } });

      // Act
      const sameOrigin = await get(embedToken, 'same-origin');
      const crossSite = await get(embedToken, 'cross-site');
      const notAllowed = await get(elsewhere, 'same-origin');
      const exchanged = await platform.api('POST', '/embed/chat', { body: { token: embedToken }, headers: { 'sec-fetch-site': 'same-origin' } });

      // Assess
      expect(sameOrigin.status, sameOrigin.text).toBe(200);
      expect(sameOrigin.body.data.agentId).toBe(echoId);
      expect(crossSite.status).toBe(403);
      expect(notAllowed.status).toBe(403);
      expect(exchanged.status, exchanged.text).toBe(200);
    });

    it('lets a page call the API cross-origin (CORS)', async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: echoId });

      // Act
      const preflight = await fetch(`${platform.url}/embed/chat`, {
        method: 'OPTIONS',
        headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      const res = await config(embedToken, PAGE);

      // Assess
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    });
  });

  describe('visitor credentials', () => {
    it('chats with the embed agent, billed to the owner, and reaches nothing else', async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: echoId });
      const before = await credits(owner);

      // Act
      const session = await exchange(embedToken);
      const bearer = session.body.data.bearerToken as string;
      const reply = await chat(bearer, echoId, 'hello widget');
      const otherAgent = await chat(bearer, secondId, 'hello');
      const userInfo = await platform.api('GET', '/user/info', { token: bearer });
      const create = await platform.api('POST', '/agent/create', { token: bearer, body: { agentName: 'x', description: 'x', sourceCode: ECHO } });
      const list = await platform.api('GET', '/embed/list', { token: bearer });

      // Assess
      expect(session.status, session.text).toBe(200);
      expect(session.body.data).toMatchObject({ agentId: echoId, streamUrl: `${streamUrl}/agent/${echoId}/chat` });
      expect(bearer).not.toContain(owner.token);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.text).toContain('echo: hello widget');
      expect(otherAgent.status).toBe(403);
      expect(userInfo.status).toBe(403);
      expect(create.status).toBe(403);
      expect(list.status).toBe(403);
      expect(await credits(owner)).toBeLessThan(before);
    });

    it("works only on the site it is restricted to: another user's site on the same platform is refused", async () => {
      // Prepare: the owner restricts the token to the host of the site the platform gives them.
      const ownSite = new URL((await platform.api('GET', '/website/info', { token: owner.token })).body.data.siteUrl);
      const otherSite = new URL((await platform.api('GET', '/website/info', { token: other.token })).body.data.siteUrl);
      const { embedToken } = await embedOf({ agentId: echoId, allowedDomains: [ownSite.host] });

      // Act
      const fromOwn = await config(embedToken, ownSite.origin);
      const fromOther = await config(embedToken, otherSite.origin);
      const credentialFromOther = await exchange(embedToken, otherSite.origin);

      // Assess
      expect(fromOwn.status, fromOwn.text).toBe(200);
      expect(fromOther.status).toBe(403);
      expect(fromOther.body.code).toBe('DOMAIN_NOT_ALLOWED');
      expect(credentialFromOther.status).toBe(403);
      expect(credentialFromOther.text).not.toContain('svc_run_');
    });

    it('refuses a disallowed origin with 403 and no credential', async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: echoId, allowedDomains: ['example.com'] });

      // Act
      const res = await exchange(embedToken, 'https://evil.com');

      // Assess
      expect(res.status).toBe(403);
      expect(res.text).not.toContain('svc_run_');
    });

    it('stops at once when revoked: config, new credentials and credentials already handed out; reactivation restores it', async () => {
      // Prepare
      const { embedToken, embedTokenId } = await embedOf({ agentId: echoId });
      const bearer = (await exchange(embedToken)).body.data.bearerToken as string;

      // Act
      const revoked = await platform.api('DELETE', `/embed/${embedTokenId}`, { token: owner.token });
      const configAfter = await config(embedToken, PAGE);
      const exchangeAfter = await exchange(embedToken);
      const chatAfter = await chat(bearer, echoId, 'still there?');
      const reactivated = await platform.api('PUT', `/embed/${embedTokenId}`, { token: owner.token, body: { status: 'active' } });
      const chatAgain = await chat(bearer, echoId, 'back');

      // Assess
      expect(revoked.status, revoked.text).toBe(200);
      expect(configAfter.status).toBe(401);
      expect(exchangeAfter.status).toBe(401);
      expect(chatAfter.status).toBe(403);
      expect(reactivated.status, reactivated.text).toBe(200);
      expect(reactivated.body.data.status).toBe('active');
      expect(chatAgain.status).toBe(200);
    });

    it('answers 429 past rateLimitPerIp and rateLimitPerDay', async () => {
      // Prepare
      const perIp = await embedOf({ agentId: echoId, rateLimitPerIp: 2 });
      const perDay = await embedOf({ agentId: echoId, rateLimitPerDay: 1 });

      // Act
      const ipResults = [await exchange(perIp.embedToken), await exchange(perIp.embedToken), await exchange(perIp.embedToken)];
      const dayResults = [await exchange(perDay.embedToken), await exchange(perDay.embedToken)];

      // Assess
      expect(ipResults.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(dayResults.map((r) => r.status)).toEqual([200, 429]);
    });

    it('stops chats once creditLimit is spent and counts what was used', async () => {
      // Prepare
      const { embedToken, embedTokenId } = await embedOf({ agentId: echoId, creditLimit: 1 });
      const bearer = (await exchange(embedToken)).body.data.bearerToken as string;

      // Act
      const first = await chat(bearer, echoId, 'one');
      const second = await chat(bearer, echoId, 'two');
      const newSession = await exchange(embedToken);
      const listed = (await platform.api('GET', '/embed/list?limit=100', { token: owner.token })).body.data.tokens.find(
        (t: { embedTokenId: string }) => t.embedTokenId === embedTokenId,
      );

      // Assess
      expect(first.status).toBe(200);
      expect(second.status).toBe(429);
      expect(second.text).toContain('credit limit');
      expect(newSession.status).toBe(429);
      expect(listed.creditsUsed).toBeGreaterThanOrEqual(1);
    });
  });

  describe('visitor isolation', () => {
    let historyId: string;
    /** A visitor of `embedToken`: its bearer and visitor token, from `POST /embed/chat`. */
    const visit = async (embedToken: string, visitorToken?: string) => {
      const res = await exchange(embedToken, PAGE, visitorToken);
      expect(res.status, res.text).toBe(200);
      return res.body.data as { bearerToken: string; visitorToken: string };
    };
    /** The three chat routes, each continuing `conversationId` (or starting one), as status and text. */
    const routes = {
      buffered: (bearer: string, prompt: string, conversationId?: string) =>
        platform.api('POST', `/agent/${historyId}/chat`, { token: bearer, body: { prompt, ...(conversationId === undefined ? {} : { conversationId }) } }),
      stream: (bearer: string, prompt: string, conversationId?: string) =>
        callApi(streamUrl, 'POST', `/agent/${historyId}/chat`, {
          token: bearer,
          body: { prompt, ...(conversationId === undefined ? {} : { conversationId }) },
        }),
      browser: (bearer: string, prompt: string, conversationId?: string) =>
        callApi(
          streamUrl,
          'GET',
          `/agent/${historyId}/chat?prompt=${encodeURIComponent(prompt)}${conversationId === undefined ? '' : `&sessionId=${conversationId}`}`,
          {
            token: bearer,
          },
        ),
    };
    /** Starts a conversation over the streaming route; its id. */
    const start = async (bearer: string, prompt: string) => {
      const res = await routes.stream(bearer, prompt);
      expect(res.status, res.text).toBe(200);
      return res.headers.get('x-conversation-id') as string;
    };

    beforeAll(async () => {
      historyId = await createAgent(owner, 'embed-history', { sourceCode: HISTORY });
    });

    it("refuses one visitor's conversation to another on every chat route, as if it did not exist; its visitor continues it with a renewed bearer", async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: historyId });
      const a = await visit(embedToken);
      const conversationId = await start(a.bearerToken, 'my secret order number');
      const b = await visit(embedToken);
      const unknownId = crypto.randomUUID();

      // Act
      const byB = await Promise.all(Object.values(routes).map((route) => route(b.bearerToken, 'what did I say?', conversationId)));
      const unknown = await Promise.all(Object.values(routes).map((route) => route(b.bearerToken, 'what did I say?', unknownId)));
      const aRenewed = await visit(embedToken, a.visitorToken);
      const resumed = await routes.buffered(aRenewed.bearerToken, 'and again', conversationId);

      // Assess
      expect(byB.map((r) => r.status)).toEqual([404, 404, 404]);
      const errorOf = (res: { body: { error: unknown } }, id: string) => JSON.stringify(res.body.error).replaceAll(id, 'ID');
      expect(byB.map((r) => errorOf(r, conversationId))).toEqual(unknown.map((r) => errorOf(r, unknownId)));
      for (const res of byB) expect(res.text).not.toMatch(/history=|secret order/);
      expect(aRenewed.bearerToken).not.toBe(a.bearerToken);
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.body.data.response).toBe('history=2 roles=user,assistant');
    });

    it("refuses the owner's own conversation to visitors, while the owner may still continue a visitor's", async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: historyId });
      const ownersId = await start(owner.token, 'owner only');
      const visitor = await visit(embedToken);
      const visitorsId = await start(visitor.bearerToken, 'visitor here');

      // Act
      const visitorOnOwners = await routes.stream(visitor.bearerToken, 'let me in', ownersId);
      const ownerOnVisitors = await routes.buffered(owner.token, 'owner joins', visitorsId);
      const visitorAfterwards = await routes.buffered(visitor.bearerToken, 'still mine?', visitorsId);

      // Assess
      expect(visitorOnOwners.status).toBe(404);
      expect(visitorOnOwners.text).not.toContain('history=');
      expect(ownerOnVisitors.status, ownerOnVisitors.text).toBe(200);
      expect(ownerOnVisitors.body.data.response).toBe('history=2 roles=user,assistant');
      expect(visitorAfterwards.status, visitorAfterwards.text).toBe(200);
      expect(visitorAfterwards.body.data.response).toBe('history=4 roles=user,assistant,user,assistant');
    });

    it("starts a fresh visitor for a garbage, tampered or other embed's visitor token, without an error", async () => {
      // Prepare
      const { embedToken } = await embedOf({ agentId: historyId });
      const other = await embedOf({ agentId: historyId });
      const a = await visit(embedToken);
      const conversationId = await start(a.bearerToken, 'mine');
      const [body, sig] = a.visitorToken.split('.');
      const tampered = `${body}x.${sig}`;

      // Act
      const sessions = await Promise.all([
        exchange(embedToken, PAGE, 'garbage'),
        exchange(embedToken, PAGE, tampered),
        exchange(other.embedToken, PAGE, a.visitorToken),
      ]);
      const attempts = await Promise.all(sessions.map((s) => routes.buffered(s.body.data.bearerToken, 'whose is it?', conversationId)));
      const freshChat = await routes.buffered(sessions[0]!.body.data.bearerToken, 'hello');

      // Assess
      expect(sessions.map((s) => s.status)).toEqual([200, 200, 200]);
      for (const s of sessions) expect(s.body.data.visitorToken).toMatch(/^svc_vis_/);
      expect(attempts.map((r) => r.status)).toEqual([404, 404, 404]);
      expect(freshChat.status, freshChat.text).toBe(200);
      expect(freshChat.body.data.response).toBe('history=0 roles=');
    });
  });

  describe('owner management', () => {
    it('lists the owner’s tokens page by page, without the secret', async () => {
      // Prepare
      const owner2 = await createUser(platform, { alias: 'embed-lister', credits: 10 });
      const agentId = await createAgent(owner2, 'lister-echo');
      for (let i = 0; i < 3; i++) expect((await createEmbed({ agentId }, owner2)).status).toBe(200);

      // Act
      const first = await platform.api('GET', '/embed/list?limit=2', { token: owner2.token });
      const second = await platform.api('GET', `/embed/list?limit=2&cursor=${encodeURIComponent(first.body.data.nextCursor)}`, { token: owner2.token });

      // Assess
      expect(first.status, first.text).toBe(200);
      expect(first.body.data.count).toBe(2);
      expect(second.body.data.count).toBe(1);
      expect(second.body.data.nextCursor).toBeNull();
      const token = first.body.data.tokens[0];
      expect(Object.keys(token).sort()).toEqual(
        expect.arrayContaining([
          'embedTokenId',
          'tokenPrefix',
          'agentId',
          'voiceAgentId',
          'allowedDomains',
          'config',
          'minutesUsed',
          'minutesLimit',
          'status',
          'createdAt',
        ]),
      );
      expect(token.tokenPrefix).toMatch(/^emb_pk_live_.{4}$/);
      expect(first.text).not.toMatch(/emb_pk_live_[0-9A-Za-z]{46}/);
      expect(first.text).not.toContain('digest');
    });

    it('updates domains, limits and config, and hides other owners’ tokens (404)', async () => {
      // Prepare
      const { embedTokenId } = await embedOf({ agentId: echoId });

      // Act
      const updated = await platform.api('PUT', `/embed/${embedTokenId}`, {
        token: owner.token,
        body: { allowedDomains: ['example.com'], rateLimitPerDay: 5, config: { color: '#000000', size: 'large' } },
      });
      const empty = await platform.api('PUT', `/embed/${embedTokenId}`, { token: owner.token, body: {} });
      const byOther = await platform.api('PUT', `/embed/${embedTokenId}`, { token: other.token, body: { status: 'revoked' } });
      const deleteByOther = await platform.api('DELETE', `/embed/${embedTokenId}`, { token: other.token });

      // Assess
      expect(updated.status, updated.text).toBe(200);
      expect(updated.body.data).toMatchObject({
        allowedDomains: ['example.com'],
        rateLimitPerDay: 5,
        config: { color: '#000000', size: 'large', mode: 'text' },
      });
      expect(empty.status).toBe(400);
      expect(byOther.status).toBe(404);
      expect(deleteByOther.status).toBe(404);
    });
  });
});
