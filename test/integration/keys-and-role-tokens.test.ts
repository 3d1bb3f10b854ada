import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requireUser, type UserActor } from '../../functions/core/auth/actor.ts';
import { sha256Hex } from '../../functions/core/ids.ts';
import { defineRoute } from '../../functions/core/http/route.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { boundRoute } from '../../lib/local/handlers.ts';
import { createLocalServer } from '../../lib/local/server.ts';
import { callApi, createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { callsOn, recordStoreCalls } from '../support/store-calls.ts';

/**
 * A stand-in resource run until the runtimes land: it asks the keys reader for keys, debits one
 * credit and writes a usage record, as every real run will. It answers digests of the keys it got,
 * so the test can tell which keys arrived without any value leaving the run.
 */
const fakeRunSpec: RouteSpec = {
  id: 'test.fake-run',
  method: 'POST',
  path: '/fake-run',
  host: 'base',
  area: 'test',
  handler: 'fake-run',
  auth: 'required',
  callers: 'role',
  mode: 'buffered',
  style: 'A',
  timeoutSec: 10,
  maxBodyBytes: 4096,
};

/** The stand-in's area declares the ports a run uses, as a real area module would. */
const testArea = defineArea({ name: 'test', uses: ['keysReader', 'credits', 'usageLogs'] });

const fakeRun = defineRoute({
  body: z.object({ keysNeeded: z.array(z.string()) }),
  async run({ actor, body, ports, lineage }) {
    const caller = requireUser(actor);
    const started = ports.clock.now();
    const keys = await ports.keysReader.readKeys(caller, caller.userId, body.keysNeeded);
    const entry = await ports.credits.debit(caller.userId, 1, { reason: 'fake run', requestId: lineage.requestId });
    const received = Object.fromEntries(Object.entries(keys).map(([name, value]) => [name, sha256Hex(value)]));
    await ports.usageLogs.write({
      lineage,
      userId: caller.userId,
      resourceId: 'fake',
      resourceType: 'test',
      status: 'success',
      // What a careless run might log: the event with the keys in it. The writer must not keep them.
      request: { keysNeeded: body.keysNeeded, keys },
      response: { received },
      durationMs: ports.clock.now() - started,
      creditsUsed: 1,
    });
    ports.log.debug('fake run finished', { keys });
    return { received, balanceAfter: entry.balanceAfter };
  },
});

describe('keys vault, role tokens and credits over HTTP', () => {
  const logLines: string[] = [];
  let platform: TestPlatform;
  let runner: Server;
  let runnerUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ logLines });
    runner = createLocalServer({
      routes: [boundRoute({ spec: fakeRunSpec, definition: fakeRun, area: testArea })],
      streamRoutes: [],
      ports: () => platform.running.ports,
    });
    await new Promise<void>((resolve) => runner.listen(0, '127.0.0.1', resolve));
    runnerUrl = `http://127.0.0.1:${(runner.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => runner.close(() => resolve()));
    await platform.stop({ removeData: true });
  });

  it('stores, lists without values, checks, replaces and deletes keys', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'keeper' });
    const value = 'sk-live-KEEPER-0123456789abcdef';
    // Act
    const stored = await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'OpenAI', apiKey: value } });
    const replaced = await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'openai', apiKey: value + 'X' } });
    const list = await platform.api('GET', '/keys/list', { token: user.token });
    const present = await platform.api('GET', '/keys/check/OPENAI', { token: user.token });
    const absent = await platform.api('GET', '/keys/check/github', { token: user.token });
    const removed = await platform.api('DELETE', '/keys/openai', { token: user.token });
    const removedAgain = await platform.api('DELETE', '/keys/openai', { token: user.token });
    const afterDelete = await platform.api('GET', '/keys/check/openai', { token: user.token });
    // Assess
    expect(stored.status).toBe(200);
    expect(stored.body.data).toMatchObject({ serviceName: 'openai', hint: '****cdef', replaced: false });
    expect(replaced.body.data).toMatchObject({ hint: '****defX', replaced: true });
    expect(list.body.data).toEqual({
      keys: [{ serviceName: 'openai', hint: '****defX', createdAt: expect.any(Number), updatedAt: expect.any(Number) }],
      count: 1,
    });
    expect(present.body.data).toEqual({ serviceName: 'openai', exists: true });
    expect(absent.body.data).toEqual({ serviceName: 'github', exists: false });
    expect(removed.status).toBe(200);
    expect(removedAgain.status).toBe(404);
    expect(afterDelete.body.data.exists).toBe(false);
    for (const res of [stored, replaced, list, present]) expect(res.text).not.toContain('KEEPER');
  });

  it('names invalid key input', async () => {
    const user = await createUser(platform, { alias: 'bad-keys' });
    const badName = await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'has space', apiKey: 'x' } });
    const noKey = await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'ok' } });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toContain('serviceName');
    expect(noKey.status).toBe(400);
    expect(noKey.body.error).toContain('apiKey: is required');
  });

  it("injects only the owner's requested keys into a run, and the values appear in no response, log record, log line or file", async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'injected', credits: 10 });
    const other = await createUser(platform, { alias: 'bystander', credits: 10 });
    const secretA = 'sk-live-AAAA-injected-value-111111';
    const secretB = 'ghp_BBBB-injected-value-222222';
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'openai', apiKey: secretA } });
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'github', apiKey: secretB } });
    await platform.api('POST', '/keys/store', { token: other.token, body: { serviceName: 'openai', apiKey: 'sk-live-OTHER-333333' } });

    // Act
    const run = await callApi(runnerUrl, 'POST', '/fake-run', { token: user.token, body: { keysNeeded: ['openai', 'missing'] } });
    const record = await platform.running.ports.db.doc.send(
      new GetCommand({
        TableName: platform.running.ports.db.table('usage-logs'),
        Key: { requestId: run.body.requestId ?? run.headers.get('x-request-id') },
        ConsistentRead: true,
      }),
    );

    // Assess: the run received exactly the owner's openai key
    expect(run.status).toBe(200);
    expect(run.body.data.received).toEqual({ openai: sha256Hex(secretA) });
    expect(record.Item).toBeDefined();
    const everything = [run.text, JSON.stringify(record.Item), ...logLines].join('\n');
    for (const secret of [secretA, secretB]) expect(everything).not.toContain(secret);
    expect(logLines.some((l) => l.includes('fake run finished'))).toBe(true);

    // Assess: nothing in DATA_DIR holds a key in plain text
    const entries = await readdir(platform.dataDir, { withFileTypes: true, recursive: true });
    const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    for (const file of files) {
      const content = await readFile(file);
      expect(content.includes(secretA), file).toBe(false);
      expect(content.includes(secretB), file).toBe(false);
    }
    const sealed = await platform.running.ports.keys.get(user.userId, 'openai');
    expect(sealed?.sealed).toMatchObject({ v: 1, keyRef: 'local', wrappedKey: null });
    expect(JSON.stringify(sealed)).not.toContain(secretA);
  });

  it('gives role tokens a reduced scope and only their attached keys', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'roler', credits: 10 });
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'openai', apiKey: 'sk-live-ROLE-A-123456' } });
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'github', apiKey: 'ghp_ROLE-B-123456' } });

    // Act
    const created = await platform.api('POST', '/role-token/create', { token: user.token, body: { name: 'ci-bot', keys: ['openai'] } });
    const unknownKey = await platform.api('POST', '/role-token/create', { token: user.token, body: { name: 'typo', keys: ['opnai'] } });
    const role = created.body.data.token as string;
    const validated = await platform.api('POST', '/role-token/validate', { body: { token: role } });
    const read = await platform.api('GET', '/user/info', { token: role });
    const manageTokens = await platform.api('POST', '/user/token/create', { token: role, body: { name: 'escalate' } });
    const manageKeys = await platform.api('POST', '/keys/store', { token: role, body: { serviceName: 'x', apiKey: 'y' } });
    const listKeys = await platform.api('GET', '/keys/list', { token: role });
    const run = await callApi(runnerUrl, 'POST', '/fake-run', { token: role, body: { keysNeeded: ['openai', 'github'] } });
    const listed = await platform.api('GET', '/role-token/list', { token: user.token });

    // Assess
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ name: 'ci-bot', keys: ['openai'], tokenId: expect.stringMatching(/^tok_/) });
    expect(role).toMatch(/^svc_rt_[0-9A-Za-z]{89}$/);
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.error).toContain('opnai');
    expect(validated.body.data).toEqual({ valid: true, ownerAlias: 'roler', name: 'ci-bot', keys: ['openai'], expiresAt: null });
    expect(validated.text).not.toContain('ROLE-A');
    expect(read.status).toBe(200);
    expect(manageTokens.status).toBe(403);
    expect(manageKeys.status).toBe(403);
    expect(listKeys.status).toBe(403);
    expect(run.status).toBe(200);
    expect(Object.keys(run.body.data.received)).toEqual(['openai']);
    expect(listed.body.data.roleTokens).toEqual([expect.objectContaining({ name: 'ci-bot', keys: ['openai'], status: 'active' })]);
    expect(listed.text).not.toContain(role);

    // Act: revoke
    const revoked = await platform.api('POST', '/role-token/revoke', { token: user.token, body: { tokenId: created.body.data.tokenId } });
    const afterRevoke = await platform.api('POST', '/role-token/validate', { body: { token: role } });
    const authAfterRevoke = await platform.api('GET', '/user/info', { token: role });
    // Assess
    expect(revoked.status).toBe(200);
    expect(afterRevoke.body.data).toEqual({ valid: false });
    expect(authAfterRevoke.status).toBe(401);
  });

  it("reads all of an owner's keys a run may receive in one store read, and only the attached ones for the owner's role token", async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'allkeys', credits: 10 });
    const values = { openai: 'sk-live-ALL-A-123456', github: 'ghp_ALL-B-123456', maps: 'maps-ALL-C-123456' };
    for (const [serviceName, apiKey] of Object.entries(values)) await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName, apiKey } });
    const owner: UserActor = {
      kind: 'user',
      userId: user.userId,
      alias: 'allkeys',
      isAdmin: false,
      via: 'user-token',
      tokenId: null,
      scope: 'full',
      roleKeys: null,
    };
    const roleToken: UserActor = { ...owner, via: 'role-token', scope: 'role', roleKeys: ['github'] };
    const other: UserActor = { ...owner, userId: 'someone-else', alias: null };
    const { db, config, keysReader } = platform.running.ports;

    // Act
    const asOwner = await recordStoreCalls(db, config.TABLE_PREFIX, () => keysReader.readAllKeys(owner, user.userId));
    const asRoleToken = await keysReader.readAllKeys(roleToken, user.userId);
    const asOtherCaller = await keysReader.readAllKeys(other, user.userId);

    // Assess
    expect(asOwner.result).toEqual(values);
    expect(callsOn(asOwner.calls, 'keys')).toEqual(['keys.Query']);
    expect(asRoleToken).toEqual({ github: values.github });
    // Another caller's run gets all of the owner's keys: the code that receives them is the owner's.
    expect(asOtherCaller).toEqual(values);
  });

  it('answers validate with the same {valid: false} for any invalid token', async () => {
    const user = await createUser(platform, { alias: 'validator' });
    for (const token of ['', 'garbage', user.token, 'svc_rt_' + 'A'.repeat(46)]) {
      const res = await platform.api('POST', '/role-token/validate', { body: { token } });
      expect(res.status, token).toBe(200);
      expect(res.body.data).toEqual({ valid: false });
    }
  });

  it('lets 50 concurrent runs against a balance of 20 leave exactly 0, with 30 refused with 402', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'racer', credits: 20 });
    // Act
    const runs = await Promise.all(Array.from({ length: 50 }, () => callApi(runnerUrl, 'POST', '/fake-run', { token: user.token, body: { keysNeeded: [] } })));
    const credits = await platform.api('GET', '/user/credits', { token: user.token });
    // Assess
    expect(runs.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = runs.filter((r) => r.status === 402);
    expect(refused).toHaveLength(30);
    expect(refused[0]!.body).toMatchObject({
      success: false,
      error: { code: 'INSUFFICIENT_CREDITS', message: expect.stringContaining('Insufficient credits') },
    });
    expect(credits.body.data.credits).toBe(0);
    const ledger = await platform.running.ports.db.doc.send(
      new QueryCommand({
        TableName: platform.running.ports.db.table('credit-ledger'),
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': user.userId },
      }),
    );
    expect((ledger.Items ?? []).filter((e) => e['reason'] === 'fake run')).toHaveLength(20);
    expect((ledger.Items ?? []).filter((e) => e['reason'] === 'initial grant')).toHaveLength(1);
  });
});

describe('monthly free credits', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { MONTHLY_FREE_CREDITS: '100' } });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('grants once per calendar month on first activity, with a ledger entry', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'monthly' });
    // Act
    const first = await Promise.all(Array.from({ length: 5 }, () => platform.api('GET', '/user/credits', { token: user.token })));
    platform.clock.advance(32 * 86_400_000);
    const nextMonth = await platform.api('GET', '/user/credits', { token: user.token });
    // Assess: concurrent first calls grant once
    for (const res of first) expect(res.body.data.credits).toBe(100);
    expect(first[0]!.body.data.monthlyFreeCredits).toBe(100);
    expect(nextMonth.body.data.credits).toBe(200);
    const grants = nextMonth.body.data.recentEntries.filter((e: { reason: string }) => e.reason.startsWith('monthly free credits'));
    expect(grants).toHaveLength(2);
    expect(grants[0].balanceAfter).toBe(200);
  });
});

describe('declared rate limits', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers the 61st validation in a minute from one address with 429 and Retry-After, then recovers', async () => {
    // Prepare
    platform.clock.alignToWindow(60_000);
    const attempts = Array.from({ length: 60 }, () => platform.api('POST', '/role-token/validate', { body: { token: 'x' } }));
    const allowed = await Promise.all(attempts);
    // Act
    const limited = await platform.api('POST', '/role-token/validate', { body: { token: 'x' } });
    platform.clock.advance(60_000);
    const recovered = await platform.api('POST', '/role-token/validate', { body: { token: 'x' } });
    // Assess
    expect(allowed.every((r) => r.status === 200)).toBe(true);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(recovered.status).toBe(200);
  });
});
