import { describe, expect, it } from 'vitest';
import { assertAgentInScope, assertCallerAdmitted, requireAlias, requireFullAccess, type UserActor } from '../../functions/core/auth/actor.ts';
import type { AccountCredential, CredentialLookup, TokenCredential } from '../../functions/core/auth/credentials.ts';
import { resolveActor } from '../../functions/core/auth/resolve-actor.ts';
import { createRunTokens, fixedKeyRing, secretsManagerKeyRing, type RunTokenSecretStage } from '../../functions/core/auth/run-token.ts';
import { digestSecret, generateSecret, isWellFormedSecret, readSecret, secretPrefixHint, type TokenLocator } from '../../functions/core/auth/secrets.ts';
import { AccessDeniedError, AliasRequiredError, AuthenticationRequiredError } from '../../functions/core/errors.ts';

/** In-memory credential port: actor resolution is domain logic and needs no AWS. */
function fakeCredentials(accounts: AccountCredential[], tokens: TokenCredential[]) {
  const used: string[] = [];
  /** How each lookup found its token: by the locator the token carries, or by its digest. */
  const lookups: ('locator' | 'digest')[] = [];
  const lookup: CredentialLookup = {
    findToken: async (digest, locator) => {
      lookups.push(locator === null ? 'digest' : 'locator');
      const token = locator === null ? tokens.find((t) => t.digest === digest) : tokens.find((t) => t.tokenId === locator.tokenId);
      const userId = locator?.userId ?? token?.userId;
      return token === undefined ? null : { token, account: accounts.find((a) => a.userId === userId) ?? null };
    },
    getAccount: async (userId) => accounts.find((a) => a.userId === userId) ?? null,
    accountForIdentity: async () => {
      throw new Error('not used');
    },
    markTokenUsed: async (tokenId) => {
      used.push(tokenId);
    },
  };
  return { lookup, used, lookups };
}

const NOW = 1_800_000_000_000;

function setup(overrides: { token?: Partial<TokenCredential>; account?: Partial<AccountCredential> } = {}) {
  const token = generateSecret('userToken');
  const secretKey = generateSecret('secretKey');
  const account: AccountCredential = {
    userId: 'u1',
    alias: 'ann',
    isAdmin: false,
    status: 'active',
    secretKeyDigest: digestSecret(secretKey),
    grantMonth: null,
    item: { userId: 'u1', credits: 5 },
    ...overrides.account,
  };
  const credential: TokenCredential = {
    tokenId: 't1',
    userId: 'u1',
    kind: 'user',
    digest: digestSecret(token),
    status: 'active',
    expiresAt: null,
    lastUsedAt: null,
    keys: null,
    ...overrides.token,
  };
  const { lookup, used } = fakeCredentials([account], [credential]);
  const ports = { credentials: lookup, identity: null, runTokens: createRunTokens(fixedKeyRing(Buffer.alloc(32, 3)), { now: () => NOW }), now: NOW };
  return { token, secretKey, ports, used };
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, query: {} });

const LOCATOR: TokenLocator = { tokenId: 'tok_0AbCdEfGh1234567890xy', userId: '0f8fad5b-d9cb-469f-a165-70867728950e' };

/** An active account of `userId`, for the located-token tests. */
const accountOf = (userId: string, alias: string | null = null): AccountCredential => ({
  userId,
  alias,
  isAdmin: false,
  status: 'active',
  secretKeyDigest: '',
  grantMonth: null,
  item: {},
});

/** The active user token stored at LOCATOR, holding `digest`. */
const recordAtLocator = (digest: string): TokenCredential => ({
  tokenId: LOCATOR.tokenId,
  userId: LOCATOR.userId,
  kind: 'user',
  digest,
  status: 'active',
  expiresAt: null,
  lastUsedAt: NOW,
  keys: null,
});

describe('secrets', () => {
  it("carry the ids of their token and account when both have the platform's shapes, behind the same checksum", () => {
    // Act
    const located = generateSecret('userToken', LOCATOR);
    const maxUser = generateSecret('roleToken', { ...LOCATOR, userId: 'ffffffff-ffff-ffff-ffff-ffffffffffff' });
    const otherShapes = [
      generateSecret('userToken', { ...LOCATOR, userId: 'google_1234' }),
      generateSecret('userToken', { ...LOCATOR, userId: LOCATOR.userId.toUpperCase() }),
      generateSecret('userToken', { ...LOCATOR, tokenId: 't1' }),
    ];
    // Assess
    expect(located).toMatch(/^svc_ut_[0-9A-Za-z]{89}$/);
    expect(readSecret('userToken', located)).toEqual({ locator: LOCATOR });
    expect(readSecret('roleToken', maxUser)?.locator?.userId).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    for (const token of otherShapes) expect(readSecret('userToken', token)).toEqual({ locator: null });
    for (let at = 7; at < located.length; at += 9) {
      const changed = located.slice(0, at) + (located[at] === 'a' ? 'b' : 'a') + located.slice(at + 1);
      expect(readSecret('userToken', changed)).toBeNull();
    }
    expect(readSecret('roleToken', located)).toBeNull();
    expect(readSecret('userToken', located.slice(0, -1))).toBeNull();
  });

  it('have the prefix, 46 base62 characters and a checksum that catches a one-character change', () => {
    const token = generateSecret('userToken');
    expect(token).toMatch(/^svc_ut_[0-9A-Za-z]{46}$/);
    expect(isWellFormedSecret('userToken', token)).toBe(true);
    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(isWellFormedSecret('userToken', flipped)).toBe(false);
    expect(isWellFormedSecret('roleToken', token)).toBe(false);
    expect(secretPrefixHint(token)).toBe(token.slice(0, 11));
    expect(digestSecret(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(Array.from({ length: 200 }, () => generateSecret('userToken'))).size).toBe(200);
  });
});

describe('resolveActor', () => {
  it('resolves a valid bearer token to its account and records the use', async () => {
    const { token, ports, used } = setup();
    const actor = await resolveActor('required', bearer(token), ports);
    expect(actor).toMatchObject({ kind: 'user', userId: 'u1', alias: 'ann', via: 'user-token', tokenId: 't1', scope: 'full' });
    expect(used).toEqual(['t1']);
  });

  it('carries the account it read on the actor, so services need not read it again', async () => {
    const { token, secretKey, ports } = setup({ account: { grantMonth: '2027-01' } });
    const viaToken = (await resolveActor('required', bearer(token), ports)) as UserActor;
    const viaKey = (await resolveActor('required', { headers: { 'x-svc-userid': 'u1', 'x-svc-secretkey': secretKey }, query: {} }, ports)) as UserActor;
    for (const actor of [viaToken, viaKey]) {
      expect(actor.account).toMatchObject({ userId: 'u1', grantMonth: '2027-01', item: { userId: 'u1', credits: 5 } });
    }
  });

  it('finds a token that carries its ids by them, and one issued without by its digest', async () => {
    // Prepare
    const { ports } = setup();
    const withoutIds = generateSecret('userToken', { tokenId: 't1', userId: 'u1' });
    const withIds = generateSecret('userToken', LOCATOR);
    const { lookup, lookups } = fakeCredentials([accountOf(LOCATOR.userId, 'bo')], [recordAtLocator(digestSecret(withIds))]);
    // Act
    const actor = await resolveActor('required', bearer(withIds), { ...ports, credentials: lookup });
    await expect(resolveActor('required', bearer(withoutIds), { ...ports, credentials: lookup })).rejects.toThrow(AuthenticationRequiredError);
    // Assess
    expect(actor).toMatchObject({ userId: LOCATOR.userId, tokenId: LOCATOR.tokenId, via: 'user-token' });
    expect(lookups).toEqual(['locator', 'digest']);
  });

  it('refuses a token whose ids name a record that does not hold it, or another account', async () => {
    // Prepare: the record at LOCATOR holds another secret; a second token names the right record but another account
    const { ports } = setup();
    const forged = generateSecret('userToken', LOCATOR);
    const otherAccount = { ...LOCATOR, userId: '11111111-2222-4333-8444-555555555555' };
    const misdirected = generateSecret('userToken', otherAccount);
    const accounts = [accountOf(LOCATOR.userId), accountOf(otherAccount.userId)];
    const held = fakeCredentials(accounts, [recordAtLocator(digestSecret(generateSecret('userToken', LOCATOR)))]);
    const misdirectedRecord = fakeCredentials(accounts, [recordAtLocator(digestSecret(misdirected))]);
    // Act + Assess
    await expect(resolveActor('required', bearer(forged), { ...ports, credentials: held.lookup })).rejects.toThrow(AuthenticationRequiredError);
    await expect(resolveActor('required', bearer(misdirected), { ...ports, credentials: misdirectedRecord.lookup })).rejects.toThrow(
      AuthenticationRequiredError,
    );
  });

  it('skips the lastUsedAt write when the token was used within the last minute', async () => {
    const { token, ports, used } = setup({ token: { lastUsedAt: NOW - 30_000 } });
    await resolveActor('required', bearer(token), ports);
    expect(used).toEqual([]);
  });

  it.each([
    ['revoked', { token: { status: 'revoked' as const } }],
    ['expired', { token: { expiresAt: NOW } }],
    ['account deleted', { account: { status: 'deleted' as const } }],
    ['digest replaced by regeneration', { token: { digest: 'f'.repeat(64) } }],
  ])('refuses a %s token with the same 401', async (_name, overrides) => {
    const { token, ports } = setup(overrides);
    await expect(resolveActor('required', bearer(token), ports)).rejects.toThrow(AuthenticationRequiredError);
  });

  it('refuses malformed credentials even on optional routes, but lets absent ones through as anonymous', async () => {
    const { ports } = setup();
    await expect(resolveActor('optional', bearer('svc_ut_short'), ports)).rejects.toThrow(AuthenticationRequiredError);
    await expect(resolveActor('optional', { headers: { authorization: 'Basic abc' }, query: {} }, ports)).rejects.toThrow(AuthenticationRequiredError);
    await expect(resolveActor('optional', { headers: {}, query: {} }, ports)).resolves.toEqual({ kind: 'anonymous' });
    await expect(resolveActor('required', { headers: {}, query: {} }, ports)).rejects.toThrow(AuthenticationRequiredError);
  });

  it('does not read credentials at all on public routes', async () => {
    const { ports } = setup();
    await expect(resolveActor('public', bearer('garbage'), ports)).resolves.toEqual({ kind: 'anonymous' });
  });

  it('accepts the legacy secret key in headers or query, compared by digest', async () => {
    const { secretKey, ports } = setup();
    const viaHeaders = await resolveActor('required', { headers: { 'x-svc-userid': 'u1', 'x-svc-secretkey': secretKey }, query: {} }, ports);
    const viaQuery = await resolveActor('required', { headers: {}, query: { userId: 'u1', secretServiceKey: secretKey } }, ports);
    expect(viaHeaders).toMatchObject({ userId: 'u1', via: 'secret-key' });
    expect(viaQuery).toMatchObject({ userId: 'u1', via: 'secret-key' });
    await expect(resolveActor('required', { headers: { 'x-svc-userid': 'u1' }, query: {} }, ports)).rejects.toThrow(AuthenticationRequiredError);
  });

  it('keeps admin routes for admins', async () => {
    const { token, ports } = setup();
    await expect(resolveActor('admin', bearer(token), ports)).rejects.toThrow(AccessDeniedError);
    const admin = setup({ account: { isAdmin: true } });
    await expect(resolveActor('admin', bearer(admin.token), admin.ports)).resolves.toMatchObject({ isAdmin: true });
  });

  it('gives role tokens a reduced scope and only their keys', async () => {
    const role = generateSecret('roleToken');
    const { ports } = setup();
    const { lookup } = fakeCredentials(
      [{ userId: 'u1', alias: 'ann', isAdmin: true, status: 'active', secretKeyDigest: '', grantMonth: null, item: {} }],
      [{ tokenId: 'r1', userId: 'u1', kind: 'role', digest: digestSecret(role), status: 'active', expiresAt: null, lastUsedAt: NOW, keys: ['openai'] }],
    );
    const actor = (await resolveActor('required', bearer(role), { ...ports, credentials: lookup })) as UserActor;
    expect(actor).toMatchObject({ via: 'role-token', scope: 'role', roleKeys: ['openai'], isAdmin: false });
    expect(() => requireFullAccess(actor)).toThrow(AccessDeniedError);
  });
});

describe('run tokens', () => {
  it("authenticate as the owner with the role scope and the run's keys, until they expire", async () => {
    // Prepare
    const { ports } = setup();
    const token = await ports.runTokens.mint({ userId: 'u1', keys: ['openai'] }, 60_000);
    const allKeys = await ports.runTokens.mint({ userId: 'u1', keys: null }, 60_000);
    // Act
    const actor = await resolveActor('required', bearer(token), ports);
    const unrestricted = await resolveActor('required', bearer(allKeys), ports);
    // Assess
    expect(token).toMatch(/^svc_run_/);
    expect(actor).toMatchObject({ userId: 'u1', via: 'run-token', scope: 'role', roleKeys: ['openai'], isAdmin: false });
    expect(unrestricted).toMatchObject({ scope: 'role', roleKeys: null });
    expect(() => requireFullAccess(actor)).toThrow(AccessDeniedError);
    await expect(
      resolveActor('required', bearer(token), {
        ...ports,
        now: NOW + 61_000,
        runTokens: createRunTokens(fixedKeyRing(Buffer.alloc(32, 3)), { now: () => NOW + 61_000 }),
      }),
    ).rejects.toThrow(AuthenticationRequiredError);
  });

  it('refuse tampered or foreign-key tokens and deleted accounts', async () => {
    const { ports } = setup();
    const token = await ports.runTokens.mint({ userId: 'u1', keys: null }, 60_000);
    const [body, sig] = token.slice('svc_run_'.length).split('.');
    const forgedBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), u: 'u2' })).toString('base64url');
    const otherKey = await createRunTokens(fixedKeyRing(Buffer.alloc(32, 9)), { now: () => NOW }).mint({ userId: 'u1', keys: null }, 60_000);
    await expect(resolveActor('required', bearer(`svc_run_${forgedBody}.${sig}`), ports)).rejects.toThrow(AuthenticationRequiredError);
    await expect(resolveActor('required', bearer(otherKey), ports)).rejects.toThrow(AuthenticationRequiredError);
    const deleted = setup({ account: { status: 'deleted' } });
    const forDeleted = await deleted.ports.runTokens.mint({ userId: 'u1', keys: null }, 60_000);
    await expect(resolveActor('required', bearer(forDeleted), deleted.ports)).rejects.toThrow(AuthenticationRequiredError);
  });
});

describe('run tokens across a rotation of the cloud secret', () => {
  /** Secrets Manager's staging labels as a rotation moves them: the new value current, the old one previous. */
  function rotatingSecret(first: string) {
    const stages: { AWSCURRENT: string; AWSPREVIOUS: string | null } = { AWSCURRENT: first, AWSPREVIOUS: null };
    const reads: RunTokenSecretStage[] = [];
    return {
      reads,
      fetch: async (stage: RunTokenSecretStage) => (reads.push(stage), stages[stage]),
      rotate(next: string) {
        stages.AWSPREVIOUS = stages.AWSCURRENT;
        stages.AWSCURRENT = next;
      },
    };
  }
  const environment = (secret: ReturnType<typeof rotatingSecret>, clock: { now: () => number }) =>
    createRunTokens(secretsManagerKeyRing(secret.fetch, clock), clock);

  it('verify in every environment: old tokens under the previous value, new ones after a re-read, none two rotations old', async () => {
    // Prepare: environment A started before the rotation, B after it
    let now = NOW;
    const clock = { now: () => now };
    const secret = rotatingSecret('a'.repeat(40));
    const before = environment(secret, clock);
    const mintedBefore = await before.mint({ userId: 'u1', keys: null }, 600_000);
    const visitorBefore = await before.mintVisitor('emb1', 'vis1', 600_000);
    secret.rotate('b'.repeat(40));
    const after = environment(secret, clock);
    const mintedAfter = await after.mint({ userId: 'u1', keys: null }, 600_000);
    now += 11_000;
    // Act
    const oldInNew = await after.verify(mintedBefore);
    const oldVisitorInNew = await after.verifyVisitor(visitorBefore, 'emb1');
    const newInOld = await before.verify(mintedAfter);
    secret.rotate('c'.repeat(40));
    now += 11_000;
    const twoRotationsOld = await environment(secret, clock).verify(mintedBefore);
    const readsBefore = secret.reads.length;
    const garbage = await after.verify(`svc_run_${Buffer.from('{}').toString('base64url')}.${'A'.repeat(43)}`);
    const garbageAgain = await after.verify(`svc_run_${Buffer.from('{}').toString('base64url')}.${'B'.repeat(43)}`);
    // Assess
    expect(oldInNew).toMatchObject({ userId: 'u1' });
    expect(oldVisitorInNew).toBe('vis1');
    expect(newInOld).toMatchObject({ userId: 'u1' });
    expect(twoRotationsOld).toBeNull();
    expect(garbage).toBeNull();
    expect(garbageAgain).toBeNull();
    // A bad token re-reads the secret at most once per 10 s, so garbage cannot hammer Secrets Manager.
    expect(secret.reads.length - readsBefore).toBeLessThanOrEqual(2);
  });

  it('sign with the current value only, and read the secret again after five minutes', async () => {
    // Prepare
    let now = NOW;
    const clock = { now: () => now };
    const secret = rotatingSecret('a'.repeat(40));
    const tokens = environment(secret, clock);
    const firstToken = await tokens.mint({ userId: 'u1', keys: null }, 600_000);
    secret.rotate('b'.repeat(40));
    // Act
    const stillOld = await tokens.mint({ userId: 'u1', keys: null }, 600_000);
    now += 5 * 60_000;
    const renewed = await tokens.mint({ userId: 'u1', keys: null }, 600_000);
    const onlyNew = createRunTokens(fixedKeyRing(Buffer.alloc(32, 1)), clock);
    // Assess: the first two are signed with the old value, the third with the new one
    const signature = (token: string) => token.split('.')[1];
    const oldOnly = environment(rotatingSecret('a'.repeat(40)), clock);
    expect(await oldOnly.verify(firstToken)).not.toBeNull();
    expect(await oldOnly.verify(stillOld)).not.toBeNull();
    expect(await oldOnly.verify(renewed)).toBeNull();
    expect(await environment(rotatingSecret('b'.repeat(40)), clock).verify(renewed)).not.toBeNull();
    expect(signature(renewed)).not.toBe(signature(firstToken));
    expect(await onlyNew.verify(renewed)).toBeNull();
  });
});

describe('agent-scoped run tokens', () => {
  it('reach only the chat routes and only the agents they were issued for', async () => {
    // Prepare
    const { ports } = setup();
    const token = await ports.runTokens.mint({ userId: 'u1', keys: null, agents: ['agent-a'] }, 60_000);
    // Act
    const actor = await resolveActor('required', bearer(token), ports);
    // Assess
    expect(actor).toMatchObject({ userId: 'u1', via: 'run-token', scope: 'role', agents: ['agent-a'] });
    if (actor.kind !== 'user') throw new Error('expected a user');
    expect(() => assertCallerAdmitted('agent', actor)).not.toThrow();
    expect(() => assertCallerAdmitted('role', actor)).toThrow(AccessDeniedError);
    expect(() => assertCallerAdmitted('full', actor)).toThrow(AccessDeniedError);
    expect(() => assertAgentInScope(actor, 'agent-a')).not.toThrow();
    expect(() => assertAgentInScope(actor, 'agent-b')).toThrow(AccessDeniedError);
  });

  it('leave ordinary credentials unrestricted, and refuse a tampered agent list', async () => {
    // Prepare
    const { ports } = setup();
    const plain = await ports.runTokens.mint({ userId: 'u1', keys: null }, 60_000);
    const scoped = await ports.runTokens.mint({ userId: 'u1', keys: null, agents: ['agent-a'] }, 60_000);
    const [body, sig] = scoped.slice('svc_run_'.length).split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), a: 'agent-a' })).toString('base64url');
    // Act
    const actor = await resolveActor('required', bearer(plain), ports);
    // Assess
    if (actor.kind !== 'user') throw new Error('expected a user');
    expect(actor.agents).toBeUndefined();
    expect(() => assertCallerAdmitted('role', actor)).not.toThrow();
    expect(() => assertAgentInScope(actor, 'agent-b')).not.toThrow();
    await expect(resolveActor('required', bearer(`svc_run_${widened}.${sig}`), ports)).rejects.toThrow(AuthenticationRequiredError);
  });
});

describe('embed visitor claims', () => {
  it('round-trip with the embed token into the actor, and never without one', async () => {
    // Prepare
    const { ports } = setup();
    const visitor = await ports.runTokens.mint({ userId: 'u1', keys: null, agents: ['agent-a'], embedTokenId: 'emb-1', visitorId: 'vis-1' }, 60_000);
    const embedless = await ports.runTokens.mint({ userId: 'u1', keys: null, agents: ['agent-a'], visitorId: 'vis-1' }, 60_000);

    // Act
    const actor = await resolveActor('required', bearer(visitor), ports);
    const withoutEmbed = await resolveActor('required', bearer(embedless), ports);

    // Assess
    expect(actor).toMatchObject({ userId: 'u1', agents: ['agent-a'], embedTokenId: 'emb-1', visitorId: 'vis-1' });
    expect(withoutEmbed).not.toHaveProperty('visitorId');
  });

  it('refuse a token whose visitor claim was changed or dropped', async () => {
    // Prepare
    const { ports } = setup();
    const token = await ports.runTokens.mint({ userId: 'u1', keys: null, agents: ['agent-a'], embedTokenId: 'emb-1', visitorId: 'vis-1' }, 60_000);
    const [body, sig] = token.slice('svc_run_'.length).split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const encode = (value: unknown) => `svc_run_${Buffer.from(JSON.stringify(value)).toString('base64url')}.${sig}`;

    // Act
    const results = await Promise.allSettled([
      resolveActor('required', bearer(encode({ ...payload, v: 'vis-2' })), ports),
      resolveActor('required', bearer(encode({ ...payload, v: undefined })), ports),
    ]);

    // Assess
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});

describe('alias guard', () => {
  it('refuses resource creation for accounts without an alias, naming the fix', () => {
    const actor: UserActor = { kind: 'user', userId: 'u', alias: null, isAdmin: false, via: 'user-token', tokenId: null, scope: 'full', roleKeys: null };
    expect(() => requireAlias(actor)).toThrow(AliasRequiredError);
    expect(() => requireAlias(actor)).toThrow(/POST \/user\/alias/);
    expect(requireAlias({ ...actor, alias: 'bob' }).alias).toBe('bob');
  });
});
