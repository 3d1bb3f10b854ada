import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';

function actorFor(userId: string): UserActor {
  return { kind: 'user', userId, alias: null, isAdmin: false, via: 'user-token', tokenId: null, scope: 'full', roleKeys: null };
}

describe('OAuth account linking (SPEC 4.13)', () => {
  const logLines: string[] = [];
  const provider = new FakeProvider();
  let platform: TestPlatform;

  beforeAll(async () => {
    await provider.start();
    platform = await startTestPlatform({
      logLines,
      env: {
        // A query already in the configured URL must survive.
        OAUTH_PROVIDER_A_AUTHORIZE_URL: `${provider.url}/authorize?access_type=offline`,
        OAUTH_PROVIDER_A_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET: CLIENT_SECRET,
        OAUTH_PROVIDER_A_SCOPES: 'read:user, repo',
        // Half configured: the 400 must name exactly what is missing.
        OAUTH_PROVIDER_C_AUTHORIZE_URL: `${provider.url}/authorize-c`,
      },
    });
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await provider.stop();
  });

  /** Starts an authorization as `token`'s owner; fails the test unless it succeeds. */
  async function authorize(token: string) {
    const res = await platform.api('GET', '/oauth/authorize/provider_a', { token });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { provider: string; authorizationUrl: string; state: string; expiresAt: number; redirectUri: string };
  }

  /** The provider's redirect of the user's browser: no platform credential, only the query. */
  function callback(providerName: string, query: Record<string, string>) {
    return platform.api('GET', `/oauth/callback/${providerName}?${new URLSearchParams(query).toString()}`);
  }

  it('links an account: authorization URL with state and S256 challenge, code exchange, tokens stored as keys', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'linker' });
    const exchangesBefore = provider.exchanges;
    // Act
    const authorizeRes = await platform.api('GET', '/oauth/authorize/provider_a', { token: user.token });
    const started = authorizeRes.body.data;
    const url = new URL(started.authorizationUrl);
    const grant = provider.register('code-linker', started.authorizationUrl);
    const done = await callback('provider_a', { code: 'code-linker', state: started.state });
    const list = await platform.api('GET', '/keys/list', { token: user.token });
    const values = await platform.running.ports.keysReader.readKeys(actorFor(user.userId), user.userId, ['provider_a', 'provider_a_refresh']);
    // Assess: the authorization URL
    const redirectUri = `${platform.url}/oauth/callback/provider_a`;
    expect(authorizeRes.status).toBe(200);
    expect(started).toEqual({
      provider: 'provider_a',
      authorizationUrl: expect.any(String),
      state: expect.any(String),
      expiresAt: expect.any(Number),
      redirectUri,
    });
    expect(started.state).toMatch(/^[0-9A-Za-z]{32,}$/);
    expect(started.expiresAt - platform.clock.now()).toBeGreaterThan(9 * 60_000);
    expect(started.expiresAt - platform.clock.now()).toBeLessThanOrEqual(10 * 60_000);
    expect(`${url.origin}${url.pathname}`).toBe(`${provider.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      access_type: 'offline',
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      scope: 'read:user repo',
      state: started.state,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    // Assess: the exchange (the provider checked client credentials, redirect URI and PKCE)
    expect(done.status, done.text).toBe(200);
    expect(done.body.data).toEqual({ provider: 'provider_a', stored: ['provider_a', 'provider_a_refresh'], expiresIn: 3600, scope: 'read:user repo' });
    expect(provider.exchanges).toBe(exchangesBefore + 1);
    const verifier = provider.verifiers.at(-1)!;
    expect(verifier.length).toBeGreaterThanOrEqual(43);
    expect(authorizeRes.text).not.toContain(verifier);
    // Assess: the keys, listed without values and readable by runs
    expect(list.body.data.keys.map((k: { serviceName: string }) => k.serviceName)).toEqual(['provider_a', 'provider_a_refresh']);
    expect(values).toEqual({ provider_a: grant.accessToken, provider_a_refresh: grant.refreshToken });
    for (const text of [done.text, list.text, ...logLines]) {
      expect(text).not.toContain(grant.accessToken);
      expect(text).not.toContain(grant.refreshToken);
      expect(text).not.toContain(CLIENT_SECRET);
    }
  });

  it('accepts a state once: a reused state is refused, and of two concurrent callbacks exactly one wins', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'reuser' });
    const first = await authorize(user.token);
    provider.register('code-reuse', first.authorizationUrl);
    const second = await authorize(user.token);
    provider.register('code-race', second.authorizationUrl);
    // Act
    const used = await callback('provider_a', { code: 'code-reuse', state: first.state });
    const exchangesBefore = provider.exchanges;
    const reused = await callback('provider_a', { code: 'code-reuse', state: first.state });
    const raced = await Promise.all([
      callback('provider_a', { code: 'code-race', state: second.state }),
      callback('provider_a', { code: 'code-race', state: second.state }),
    ]);
    // Assess
    expect(used.status).toBe(200);
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ code: 'OAUTH_STATE_INVALID', error: expect.stringContaining('already used') });
    expect(raced.map((r) => r.status).sort()).toEqual([200, 400]);
    // Only the winner reached the provider; the reuse never did.
    expect(provider.exchanges).toBe(exchangesBefore + 1);
  });

  it('refuses an expired state without exchanging the code', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'late-comer' });
    const started = await authorize(user.token);
    provider.register('code-late', started.authorizationUrl);
    const exchangesBefore = provider.exchanges;
    // Act
    platform.clock.advance(10 * 60_000 + 1_000);
    const late = await callback('provider_a', { code: 'code-late', state: started.state });
    // Assess
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ code: 'OAUTH_STATE_EXPIRED', error: expect.stringContaining('expired') });
    expect(provider.exchanges).toBe(exchangesBefore);
  });

  it('refuses a state presented for another provider, and the state is spent', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'mixer' });
    const started = await authorize(user.token);
    provider.register('code-mixed', started.authorizationUrl);
    // Act
    const mixed = await callback('provider_b', { code: 'code-mixed', state: started.state });
    const retried = await callback('provider_a', { code: 'code-mixed', state: started.state });
    // Assess
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toContain('issued for provider_a, not provider_b');
    expect(retried.status).toBe(400);
    expect(retried.body.code).toBe('OAUTH_STATE_INVALID');
  });

  it("answers the provider's refusal with 400 and its error text, and spends the state", async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'refused' });
    const started = await authorize(user.token);
    // Act
    const denied = await callback('provider_a', { error: 'access_denied', error_description: 'The user said no', state: started.state });
    const after = await callback('provider_a', { code: 'whatever', state: started.state });
    const noState = await callback('provider_a', { code: 'whatever' });
    // Assess
    expect(denied.status).toBe(400);
    expect(denied.body).toMatchObject({ code: 'OAUTH_ACCESS_DENIED', error: 'provider_a did not grant access: access_denied: The user said no.' });
    expect(after.body.code).toBe('OAUTH_STATE_INVALID');
    expect(noState.status).toBe(400);
    expect(noState.body.error).toContain('no state parameter');
  });

  it('reports token endpoint failures as clear 502s, stores nothing, and lets a later link work', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'unlucky' });
    const broken = await authorize(user.token);
    provider.register('code-500', broken.authorizationUrl, 'server-error');
    const empty = await authorize(user.token);
    provider.register('code-empty', empty.authorizationUrl, 'no-access-token');
    const tampered = await authorize(user.token);
    // A challenge the platform's verifier cannot match: the provider's PKCE check must refuse.
    provider.register('code-pkce', tampered.authorizationUrl.replace(/code_challenge=[^&]+/, `code_challenge=${'x'.repeat(43)}`));
    const good = await authorize(user.token);
    const grant = provider.register('code-good', good.authorizationUrl, 'access-only');
    // Act
    const serverError = await callback('provider_a', { code: 'code-500', state: broken.state });
    const noToken = await callback('provider_a', { code: 'code-empty', state: empty.state });
    const pkce = await callback('provider_a', { code: 'code-pkce', state: tampered.state });
    const keysAfterFailures = await platform.api('GET', '/keys/list', { token: user.token });
    const linked = await callback('provider_a', { code: 'code-good', state: good.state });
    // Assess
    expect(serverError.status).toBe(502);
    expect(serverError.body).toMatchObject({ code: 'OAUTH_TOKEN_EXCHANGE_FAILED', error: expect.stringContaining('answered HTTP 500') });
    expect(serverError.text).not.toContain('exploded');
    expect(noToken.status).toBe(502);
    expect(noToken.body.error).toContain('without an access_token');
    expect(pkce.status).toBe(502);
    expect(pkce.body.error).toContain('invalid_grant: PKCE verification failed');
    expect(provider.lastRefusal).toBe('PKCE verification failed');
    expect(keysAfterFailures.body.data.count).toBe(0);
    // No refresh token in the answer: only the access token is stored.
    expect(linked.body.data).toMatchObject({ stored: ['provider_a'] });
    expect(await platform.running.ports.keysReader.readKeys(actorFor(user.userId), user.userId, ['provider_a'])).toEqual({ provider_a: grant.accessToken });
  });

  it('refuses the callback when the account that started it was deleted meanwhile', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'leaver' });
    const started = await authorize(user.token);
    provider.register('code-leaver', started.authorizationUrl);
    const exchangesBefore = provider.exchanges;
    // Act
    const deleted = await platform.api('DELETE', '/user/account', { token: user.token, body: { confirm: true } });
    const res = await callback('provider_a', { code: 'code-leaver', state: started.state });
    // Assess
    expect(deleted.status).toBe(200);
    expect(res.status).toBe(403);
    expect(provider.exchanges).toBe(exchangesBefore);
  });

  it('names what is missing for an unconfigured provider and the allowed values for an unknown one', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'chooser' });
    // Act
    const unconfigured = await platform.api('GET', '/oauth/authorize/provider_b', { token: user.token });
    const halfConfigured = await platform.api('GET', '/oauth/authorize/provider_c', { token: user.token });
    const unknown = await platform.api('GET', '/oauth/authorize/provider_x', { token: user.token });
    // Assess
    expect(unconfigured.status).toBe(400);
    expect(unconfigured.body).toMatchObject({ code: 'OAUTH_PROVIDER_NOT_CONFIGURED' });
    expect(unconfigured.body.error).toContain('OAUTH_PROVIDER_B_AUTHORIZE_URL, OAUTH_PROVIDER_B_TOKEN_URL, OAUTH_PROVIDER_B_CLIENT_ID');
    expect(halfConfigured.status).toBe(400);
    expect(halfConfigured.body.error).toContain('set OAUTH_PROVIDER_C_TOKEN_URL, OAUTH_PROVIDER_C_CLIENT_ID.');
    expect(halfConfigured.text).not.toContain(provider.url);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('provider_a, provider_b, provider_c');
  });

  it('requires a full-access credential to start linking', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'delegator' });
    const role = await platform.api('POST', '/role-token/create', { token: user.token, body: { name: 'bot' } });
    // Act
    const anonymous = await platform.api('GET', '/oauth/authorize/provider_a');
    const withRole = await platform.api('GET', '/oauth/authorize/provider_a', { token: role.body.data.token });
    // Assess
    expect(anonymous.status).toBe(401);
    expect(withRole.status).toBe(403);
  });
});
