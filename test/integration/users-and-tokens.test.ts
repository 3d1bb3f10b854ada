import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestSecret, generateSecret, secretPrefixHint } from '../../functions/core/auth/secrets.ts';
import { sortableId } from '../../functions/core/ids.ts';
import { createTokenStore } from '../../functions/tokens/token.store.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { recordStoreCalls } from '../support/store-calls.ts';

describe('users and tokens over HTTP', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('bootstraps an admin account with 10,000 credits', async () => {
    // Act
    const info = await platform.api('GET', '/user/info', { token: platform.adminToken });
    const credits = await platform.api('GET', '/user/credits', { token: platform.adminToken });
    // Assess
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({ alias: 'admin', isAdmin: true, credits: 10_000, status: 'active' });
    expect(info.body.data).not.toHaveProperty('secretKeyDigest');
    expect(credits.body.data.credits).toBe(10_000);
  });

  it('runs the token lifecycle: create, use, list, get, rename, regenerate, revoke', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'lifecycle' });

    // Act: create a second token and use it
    const created = await platform.api('POST', '/user/token/create', { token: user.token, body: { name: 'ci', expiresInDays: 30 } });
    // Assess
    expect(created.status).toBe(200);
    const issued = created.body.data;
    expect(Object.keys(issued).sort()).toEqual(['createdAt', 'expiresAt', 'name', 'token', 'tokenId', 'tokenPrefix']);
    // 40 random characters, the token's and the account's ids (43), the checksum (6)
    expect(issued.token).toMatch(/^svc_ut_[0-9A-Za-z]{89}$/);
    expect(issued.token.startsWith(issued.tokenPrefix)).toBe(true);
    expect(issued.expiresAt - issued.createdAt).toBe(30 * 86_400_000);
    expect((await platform.api('GET', '/user/info', { token: issued.token })).body.data.alias).toBe('lifecycle');

    // Act: list and get never show the token, and show lastUsedAt
    const list = await platform.api('GET', '/user/token/list', { token: user.token });
    const got = await platform.api('GET', `/user/token/${issued.tokenId}`, { token: user.token });
    // Assess
    expect(list.status).toBe(200);
    expect(list.body.data.tokens.map((t: { tokenId: string }) => t.tokenId)).toContain(issued.tokenId);
    expect(list.text).not.toContain(issued.token);
    expect(got.body.data).toMatchObject({ tokenId: issued.tokenId, name: 'ci', status: 'active', tokenPrefix: issued.tokenPrefix });
    expect(got.body.data).not.toHaveProperty('token');
    expect(got.body.data.lastUsedAt).toEqual(expect.any(Number));

    // Act: rename
    const renamed = await platform.api('PUT', '/user/token/update', { token: user.token, body: { tokenId: issued.tokenId, name: 'deploy' } });
    expect(renamed.body.data.name).toBe('deploy');

    // Act: regenerate
    const regenerated = await platform.api('POST', `/user/token/${issued.tokenId}/regenerate`, { token: user.token });
    // Assess: same id, new secret; the old one fails at once
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.data.tokenId).toBe(issued.tokenId);
    expect(regenerated.body.data.token).not.toBe(issued.token);
    expect((await platform.api('GET', '/user/info', { token: issued.token })).status).toBe(401);
    expect((await platform.api('GET', '/user/info', { token: regenerated.body.data.token })).status).toBe(200);

    // Act: revoke
    const revoked = await platform.api('POST', '/user/token/revoke', { token: user.token, body: { tokenId: issued.tokenId } });
    // Assess
    expect(revoked.status).toBe(200);
    const afterRevoke = await platform.api('GET', '/user/info', { token: regenerated.body.data.token });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.body.code).toBe('AUTHENTICATION_REQUIRED');
    const activeOnly = await platform.api('GET', '/user/token/list', { token: user.token });
    expect(activeOnly.body.data.tokens.map((t: { tokenId: string }) => t.tokenId)).not.toContain(issued.tokenId);
    const withRevoked = await platform.api('GET', '/user/token/list?includeRevoked=true', { token: user.token });
    expect(withRevoked.body.data.tokens.find((t: { tokenId: string }) => t.tokenId === issued.tokenId).status).toBe('revoked');
    expect((await platform.api('POST', `/user/token/${issued.tokenId}/regenerate`, { token: user.token })).status).toBe(409);
  });

  it('answers /user/info from the account auth read, current on every request, in one store call', async () => {
    // Prepare: count the store calls each request makes
    const user = await createUser(platform, { alias: 'oneread', credits: 5 });
    const calls: string[] = [];
    const doc = platform.running.ports.db.doc;
    doc.middlewareStack.add(
      (next, context) => (args) => {
        calls.push(context.commandName as string);
        return next(args);
      },
      { step: 'initialize', name: 'countStoreCalls' },
    );
    const info = async (headers: { token: string } | { headers: Record<string, string> }) => {
      calls.length = 0;
      const res = await platform.api('GET', '/user/info', headers);
      return { credits: res.body.data.credits as number, calls: [...calls] };
    };
    try {
      // Act (the token's first use also records lastUsedAt; uses within the next minute do not)
      const firstUse = await info({ token: user.token });
      const byToken = await info({ token: user.token });
      const byKey = await info({ headers: { 'x-svc-userid': user.userId, 'x-svc-secretkey': user.secretKey } });
      await platform.api('POST', `/admin/users/${user.userId}/credits`, { token: platform.adminToken, body: { amount: 7, reason: 'top-up' } });
      const afterGrant = await info({ token: user.token });
      // Assess: the token and the account it names, together; the handler reads nothing more
      expect(firstUse.calls).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect(byToken).toEqual({ credits: 5, calls: ['BatchGetItemCommand'] });
      expect(byKey).toEqual({ credits: 5, calls: ['GetItemCommand'] });
      expect(afterGrant.credits).toBe(12);
    } finally {
      doc.middlewareStack.remove('countStoreCalls');
    }
  });

  it('still accepts a token issued before tokens carried their ids, through its digest pointer', async () => {
    // Prepare: a token as the platform issued them before (40 random characters and the checksum)
    const user = await createUser(platform, { alias: 'legacytoken' });
    const now = platform.clock.now();
    const token = generateSecret('userToken');
    await createTokenStore(platform.running.ports.db).create({
      tokenId: sortableId('tok_', now),
      userId: user.userId,
      kind: 'user',
      name: 'old',
      digest: digestSecret(token),
      tokenPrefix: secretPrefixHint(token),
      status: 'active',
      createdAt: now,
      updatedAt: now,
      expiresAt: null,
      lastUsedAt: now,
      revokedAt: null,
      keys: null,
    });
    const { db, config } = platform.running.ports;
    // Act
    const { result: info, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () => platform.api('GET', '/user/info', { token }));
    // Assess: the pointer first, then the token and the account
    expect(info.body.data.alias).toBe('legacytoken');
    expect(calls.map((c) => `${c.table}.${c.command}`)).toEqual(['token-digests.GetItem', 'tokens.BatchGetItem', 'users.BatchGetItem']);
    expect(calls[1]!.sent).toBe(calls[2]!.sent);
  });

  it('refuses expired tokens immediately', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'expiry' });
    const created = await platform.api('POST', '/user/token/create', { token: user.token, body: { name: 'short', expiresInDays: 1 } });
    expect((await platform.api('GET', '/user/info', { token: created.body.data.token })).status).toBe(200);
    // Act
    platform.clock.advance(86_400_000 + 1_000);
    const res = await platform.api('GET', '/user/info', { token: created.body.data.token });
    // Assess
    expect(res.status).toBe(401);
  });

  it("hides other users' tokens", async () => {
    // Prepare
    const alice = await createUser(platform, { alias: 'alice-tok' });
    const mallory = await createUser(platform, { alias: 'mallory-tok' });
    // Act
    const peek = await platform.api('GET', `/user/token/${alice.tokenId}`, { token: mallory.token });
    const revoke = await platform.api('POST', '/user/token/revoke', { token: mallory.token, body: { tokenId: alice.tokenId } });
    // Assess
    expect(peek.status).toBe(404);
    expect(revoke.status).toBe(404);
    expect((await platform.api('GET', '/user/info', { token: alice.token })).status).toBe(200);
  });

  it('accepts legacy header and query credentials, and refuses wrong ones without saying which part', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'legacy' });
    // Act
    const viaHeaders = await platform.api('GET', '/user/info', { headers: { 'X-Svc-UserId': user.userId, 'X-Svc-SecretKey': user.secretKey } });
    const viaQuery = await platform.api('GET', `/user/info?userId=${user.userId}&secretServiceKey=${user.secretKey}`);
    // Change the last character to a different one (a fixed replacement would be a no-op 1 time in 62).
    const altered = user.secretKey.slice(0, -1) + (user.secretKey.endsWith('x') ? 'y' : 'x');
    const wrongSecret = await platform.api('GET', '/user/info', { headers: { 'X-Svc-UserId': user.userId, 'X-Svc-SecretKey': altered } });
    const wrongUser = await platform.api('GET', '/user/info', { headers: { 'X-Svc-UserId': 'nobody', 'X-Svc-SecretKey': user.secretKey } });
    const badToken = await platform.api('GET', '/user/info', { token: 'svc_ut_notatoken' });
    const none = await platform.api('GET', '/user/info');
    // Assess
    expect(viaHeaders.status).toBe(200);
    expect(viaHeaders.body.data.alias).toBe('legacy');
    expect(viaQuery.status).toBe(200);
    for (const res of [wrongSecret, wrongUser, badToken, none]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('AUTHENTICATION_REQUIRED');
    }
    expect(new Set([wrongSecret, wrongUser, badToken, none].map((r) => r.body.error)).size).toBe(1);
  });

  it('enforces alias rules: format, reserved words, uniqueness, change releases the old alias', async () => {
    // Prepare
    const first = await createUser(platform);
    const second = await createUser(platform);
    // Act + Assess: format
    for (const alias of ['Bob', 'a', 'has space', '-lead', 'trail-', 'under_score', 'x'.repeat(33)]) {
      const res = await platform.api('POST', '/user/alias', { token: first.token, body: { alias } });
      expect(res.status, alias).toBe(400);
      expect(res.body.error).toContain('alias');
    }
    expect((await platform.api('POST', '/user/alias', { token: first.token, body: { alias: 'api' } })).status).toBe(400);
    // uniqueness
    expect((await platform.api('POST', '/user/alias', { token: first.token, body: { alias: 'carol-9' } })).status).toBe(200);
    const taken = await platform.api('PUT', '/user/alias', { token: second.token, body: { alias: 'carol-9' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toContain('carol-9');
    // change releases the old one
    const changed = await platform.api('PUT', '/user/alias', { token: first.token, body: { alias: 'carol-10' } });
    expect(changed.body.data).toMatchObject({ alias: 'carol-10', previousAlias: 'carol-9' });
    expect((await platform.api('POST', '/user/alias', { token: second.token, body: { alias: 'carol-9' } })).status).toBe(200);
  });

  it('updates the profile with only the supplied fields', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'profiled' });
    // Act
    await platform.api('PUT', '/user/profile', { token: user.token, body: { displayName: 'Pro Filed', email: 'p@example.com' } });
    const res = await platform.api('PUT', '/user/profile', { token: user.token, body: { bio: 'hello' } });
    const bad = await platform.api('PUT', '/user/profile', { token: user.token, body: { email: 'not-an-email' } });
    const empty = await platform.api('PUT', '/user/profile', { token: user.token, body: {} });
    // Assess
    expect(res.body.data).toMatchObject({ displayName: 'Pro Filed', email: 'p@example.com', bio: 'hello' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('email');
    expect(empty.status).toBe(400);
  });

  it('deletes an account only with confirm: true, then refuses all its credentials', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'leaving' });
    const extra = (await platform.api('POST', '/user/token/create', { token: user.token, body: { name: 'extra' } })).body.data.token;
    // Act
    const unconfirmed = await platform.api('DELETE', '/user/account', { token: user.token, body: { confirm: 'yes' } });
    const deleted = await platform.api('DELETE', '/user/account', { token: user.token, body: { confirm: true } });
    // Assess
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.body.error).toContain('confirm');
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.revokedTokens).toBe(2);
    expect((await platform.api('GET', '/user/info', { token: user.token })).status).toBe(401);
    expect((await platform.api('GET', '/user/info', { token: extra })).status).toBe(401);
    expect((await platform.api('GET', '/user/info', { headers: { 'X-Svc-UserId': user.userId, 'X-Svc-SecretKey': user.secretKey } })).status).toBe(401);
    // The alias stays reserved, so nobody can take over the account's public addresses.
    const other = await createUser(platform);
    expect((await platform.api('POST', '/user/alias', { token: other.token, body: { alias: 'leaving' } })).status).toBe(409);
  });

  it('keeps admin endpoints for operators and grants credits with a ledger', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'grantee', credits: 5 });
    // Act
    const denied = await platform.api('GET', '/admin/users', { token: user.token });
    const granted = await platform.api('POST', `/admin/users/${user.userId}/credits`, { token: platform.adminToken, body: { amount: 20, reason: 'welcome' } });
    const corrected = await platform.api('POST', `/admin/users/${user.userId}/credits`, {
      token: platform.adminToken,
      body: { amount: -10, reason: 'correction' },
    });
    const overdrawn = await platform.api('POST', `/admin/users/${user.userId}/credits`, {
      token: platform.adminToken,
      body: { amount: -100, reason: 'too much' },
    });
    const unknown = await platform.api('POST', '/admin/users/no-such-user/credits', { token: platform.adminToken, body: { amount: 1, reason: 'x' } });
    // Assess
    expect(denied.status).toBe(403);
    expect(granted.body.data).toMatchObject({ amount: 20, credits: 25 });
    expect(corrected.body.data).toMatchObject({ amount: -10, credits: 15 });
    expect(overdrawn.status).toBe(409);
    expect(overdrawn.body.error).toBe('A correction of -100 would take the balance of 15 below zero.');
    expect(unknown.status).toBe(404);
    expect((await platform.api('GET', '/user/credits', { token: user.token })).body.data.credits).toBe(15);
  });

  it('lists users for operators with pagination', async () => {
    // Prepare
    await createUser(platform, { alias: 'page-a' });
    await createUser(platform, { alias: 'page-b' });
    // Act
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
      const res = await platform.api('GET', `/admin/users${query}`, { token: platform.adminToken });
      expect(res.status).toBe(200);
      expect(res.body.data.users.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.users.map((u: { alias: string | null }) => u.alias));
      cursor = res.body.data.nextCursor;
      pages++;
    } while (cursor !== null && pages < 50);
    // Assess
    expect(seen).toContain('page-a');
    expect(seen).toContain('page-b');
    expect(seen).toContain('admin');
    expect(new Set(seen.filter((a) => a !== null)).size).toBe(seen.filter((a) => a !== null).length);
    expect((await platform.api('GET', '/admin/users?cursor=garbage', { token: platform.adminToken })).status).toBe(400);
  });
});
