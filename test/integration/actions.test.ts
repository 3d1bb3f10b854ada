import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

/** Echoes its parameters (without keys), the key names it got, and its context. */
const ECHO = `def handler(event, context):
    params = {k: v for k, v in event.items() if k != "keys"}
    return {
        "statusCode": 200,
        "body": {
            "params": params,
            "keyNames": sorted(event["keys"]),
            "requestId": context.aws_request_id,
            "functionName": context.function_name,
            "memory": context.memory_limit_in_mb,
            "remaining": context.get_remaining_time_in_millis(),
        },
    }
`;
const KEY_LENGTHS = `def handler(event, context):
    return {"statusCode": 200, "body": {k: len(v) for k, v in event["keys"].items()}}
`;
const RAISING = `def handler(event, context):
    return {"statusCode": 200, "body": event["missing"]}
`;
const NO_STATUS = `def handler(event, context):
    return {"body": "no status"}
`;
const MEMORY_HOG = `def handler(event, context):
    data = "x" * (int(event["mb"]) * 1024 * 1024)
    return {"statusCode": 200, "body": len(data)}
`;
const SLEEPER = `import time


def handler(event, context):
    time.sleep(float(event["seconds"]))
    return {"statusCode": 200, "body": "awake"}
`;
/** Sleeps for \`event.seconds\`, then echoes its parameters: a run long enough to pay for run time. */
const SLOW_ECHO = `import time


def handler(event, context):
    time.sleep(event["seconds"])
    return {"statusCode": 200, "body": {"params": {k: v for k, v in event.items() if k != "keys"}}}
`;
const NOT_FOUND = `def handler(event, context):
    return {"statusCode": 404, "body": {"error": "no such city"}}
`;

type Api = ApiResponse<any>;

describe('actions over HTTP with the real Python runtime', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string; secretKey: string };
  let other: { userId: string; token: string };

  async function create(token: string, body: Record<string, unknown>): Promise<string> {
    const res = await platform.api('POST', '/action/create', {
      token,
      body: { actionName: 'An action', description: 'for tests', runtime: 'python3.12', sourceCode: ECHO, category: 'testing', ...body },
    });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data.actionId as string;
  }

  const credits = async (token: string): Promise<number> => (await platform.api('GET', '/user/credits', { token })).body.data.credits;

  /** A stored action, for tests that need many of them without a source check each. */
  const actionRecord = (ownerId: string, actionId: string, createdAt: number, category: string) => ({
    actionId,
    ownerId,
    actionName: actionId,
    nameLower: actionId,
    description: 'seeded',
    runtime: 'python3.12' as const,
    sourceCode: ECHO,
    category,
    visibility: 'private' as const,
    status: 'active' as const,
    memoryMb: 128,
    timeoutSec: 30,
    tags: [],
    parameters: [],
    keysNeeded: [],
    createdAt,
    updatedAt: createdAt,
  });

  /** Every page of a listing, following `nextCursor` (bounded); pages of 20 unless the path says otherwise. */
  async function walk(path: string, token: string) {
    const pages: { actions: { actionId: string }[]; nextCursor: string | null }[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 30; i++) {
      const paging: string = `${path.includes('limit=') ? '' : '&limit=20'}${cursor === null ? '' : `&cursor=${cursor}`}`;
      const res: Api = await platform.api('GET', `${path}${path.includes('?') ? '' : '?'}${paging}`, { token });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
      pages.push(res.body.data);
      cursor = res.body.data.nextCursor;
      if (cursor === null) break;
    }
    return { ids: pages.flatMap((page) => page.actions.map((a) => a.actionId)), sizes: pages.map((page) => page.actions.length) };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'action-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'action-other', credits: 1000 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  describe('CRUD', () => {
    it('creates with the SPEC defaults and shows the full record by id', async () => {
      // Act
      const created = await platform.api('POST', '/action/create', {
        token: owner.token,
        body: { actionName: 'Echo', description: 'echoes', runtime: 'python3.12', sourceCode: ECHO, category: 'testing' },
      });
      const actionId = created.body.data.actionId;
      const info = await platform.api('GET', `/action/info/${actionId}`, { token: owner.token });
      // Assess
      expect(created.status).toBe(200);
      expect(created.body).toEqual({ success: true, data: { actionId, message: expect.any(String) } });
      expect(actionId).toMatch(/^act-[A-Za-z0-9]{16}$/);
      expect(info.body.data).toMatchObject({
        actionId,
        actionName: 'Echo',
        runtime: 'python3.12',
        category: 'testing',
        visibility: 'private',
        status: 'development',
        memoryMb: 128,
        timeoutSec: 30,
        tags: [],
        parameters: [],
        keysNeeded: [],
        sourceCode: ECHO,
        owner: 'action-owner',
        oneClickUrl: `${platform.url}/action/${actionId}`,
      });
    });

    it('takes a supplied act- id, and answers 409 when it is taken', async () => {
      // Act
      const first = await platform.api('POST', '/action/create', {
        token: owner.token,
        body: { actionId: 'act-chosen-id', actionName: 'x', description: 'x', runtime: 'python3.12', sourceCode: ECHO, category: 'c' },
      });
      const again = await platform.api('POST', '/action/create', {
        token: other.token,
        body: { actionId: 'act-chosen-id', actionName: 'y', description: 'y', runtime: 'python3.12', sourceCode: ECHO, category: 'c' },
      });
      const badPrefix = await platform.api('POST', '/action/create', {
        token: owner.token,
        body: { actionId: 'chosen', actionName: 'x', description: 'x', runtime: 'python3.12', sourceCode: ECHO, category: 'c' },
      });
      // Assess
      expect(first.body.data.actionId).toBe('act-chosen-id');
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ success: false, error: { code: 'CONFLICT' } });
      expect(badPrefix.status).toBe(400);
      expect(badPrefix.body.error.message).toContain('actionId');
    });

    it('refuses bad input: missing fields, every source violation with its line, limits, no alias', async () => {
      // Prepare
      const noAlias = await createUser(platform, { credits: 10 });
      const base = { actionName: 'x', description: 'x', runtime: 'python3.12', sourceCode: ECHO, category: 'c' };
      // Act
      const missing = await platform.api('POST', '/action/create', { token: owner.token, body: {} });
      const violations = await platform.api('POST', '/action/create', {
        token: owner.token,
        body: { ...base, sourceCode: 'import os\nimport subprocess\n\ndef handler(event, context):\n    return eval("1")\n' },
      });
      const memory = await platform.api('POST', '/action/create', { token: owner.token, body: { ...base, memoryMb: 200, timeoutSec: 301 } });
      const runtime = await platform.api('POST', '/action/create', { token: owner.token, body: { ...base, runtime: 'nodejs20.x' } });
      const aliasless = await platform.api('POST', '/action/create', { token: noAlias.token, body: base });
      // Assess
      expect(missing.status).toBe(400);
      for (const field of ['actionName', 'description', 'runtime', 'sourceCode', 'category'])
        expect(missing.body.error.message).toContain(`${field}: is required`);
      expect(violations.status).toBe(400);
      expect(violations.body.error.code).toBe('INVALID_PARAMETERS');
      expect(violations.body.error.message).toMatch(/line 1: .*os/);
      expect(violations.body.error.message).toMatch(/line 2: .*subprocess/);
      expect(violations.body.error.message).toMatch(/line 5: .*eval/);
      expect(memory.body.error.message).toContain('memoryMb: must be one of 128, 256, 512, 1024');
      expect(memory.body.error.message).toContain('timeoutSec');
      expect(runtime.status).toBe(400);
      expect(aliasless.status).toBe(403);
      expect(aliasless.body.error.code).toBe('ALIAS_REQUIRED');
    });

    it('updates only the supplied fields, re-checks source, and lets only the owner change or delete', async () => {
      // Prepare
      const actionId = await create(owner.token, { actionName: 'Before', tags: ['a'] });
      // Act
      const updated = await platform.api('PUT', '/action/update', {
        token: owner.token,
        body: { actionId, actionName: 'After', status: 'active', memoryMb: 512 },
      });
      const badSource = await platform.api('PUT', '/action/update', { token: owner.token, body: { actionId, sourceCode: 'import socket\n' } });
      const foreignUpdate = await platform.api('PUT', '/action/update', { token: other.token, body: { actionId, description: 'mine now' } });
      const foreignDelete = await platform.api('DELETE', '/action/delete', { token: other.token, body: { actionId } });
      const info = await platform.api('GET', `/action/info/${actionId}`, { token: owner.token });
      const deleted = await platform.api('DELETE', '/action/delete', { token: owner.token, body: { actionId } });
      const afterDelete = await platform.api('GET', `/action/info/${actionId}`, { token: owner.token });
      const runDeleted = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: {} });
      const deleteAgain = await platform.api('DELETE', '/action/delete', { token: owner.token, body: { actionId } });
      // Assess
      expect(updated.status).toBe(200);
      expect(badSource.status).toBe(400);
      expect(badSource.body.error.message).toContain('sourceCode: line 1');
      expect(foreignUpdate.status).toBe(403);
      expect(foreignDelete.status).toBe(403);
      expect(info.body.data).toMatchObject({ actionName: 'After', status: 'active', memoryMb: 512, description: 'for tests', tags: ['a'], sourceCode: ECHO });
      expect(deleted.status).toBe(200);
      expect(afterDelete.status).toBe(404);
      expect(afterDelete.body.error.code).toBe('ACTION_NOT_FOUND');
      expect(runDeleted.status).toBe(404);
      expect(deleteAgain.status).toBe(404);
    });
  });

  describe('listing', () => {
    let lister: { token: string };
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      lister = await createUser(platform, { alias: 'action-lister', credits: 10 });
      // A step of the clock between creates, so "newest first" has one answer.
      const createAfterStep = (body: Record<string, unknown>) => {
        platform.clock.advance(5);
        return create(lister.token, body);
      };
      ids['weatherNow'] = await createAfterStep({ actionName: 'Weather Now', category: 'weather', status: 'active', visibility: 'public' });
      ids['weatherOld'] = await createAfterStep({ actionName: 'Old WEATHER', category: 'weather', status: 'deprecated', visibility: 'public' });
      ids['weatherDev'] = await createAfterStep({ actionName: 'weather draft', category: 'weather', status: 'development', visibility: 'public' });
      ids['privateOne'] = await createAfterStep({ actionName: 'Private sums', category: 'math', status: 'active' });
    });

    const idsOf = (res: Api) => res.body.data.actions.map((a: { actionId: string }) => a.actionId);

    it("lists the caller's own actions in every status, with count and oneClickUrl", async () => {
      // Act
      const all = await platform.api('GET', '/action/list', { token: lister.token });
      const priv = await platform.api('GET', '/action/list?visibility=private', { token: lister.token });
      // Assess
      expect(all.status).toBe(200);
      expect(idsOf(all).sort()).toEqual(Object.values(ids).sort());
      expect(all.body.data.count).toBe(4);
      const entry = all.body.data.actions.find((a: { actionId: string }) => a.actionId === ids['weatherNow']);
      expect(entry).toMatchObject({
        actionName: 'Weather Now',
        runtime: 'python3.12',
        category: 'weather',
        visibility: 'public',
        status: 'active',
        parameters: [],
        keysNeeded: [],
        oneClickUrl: `${platform.url}/action/${ids['weatherNow']}`,
      });
      expect(entry).not.toHaveProperty('sourceCode');
      expect(idsOf(priv)).toEqual([ids['privateOne']]);
    });

    it('filters by status, category, runtime and name (case-insensitive)', async () => {
      // Act
      const list = (query: string) => platform.api('GET', `/action/list?${query}`, { token: lister.token });
      const deprecated = await list('status=deprecated');
      const math = await list('category=math');
      const python = await list('runtime=python');
      const nodejs = await list('runtime=nodejs');
      const named = await list('nameContains=weather');
      const combined = await list('nameContains=WEATHER&status=active&category=weather');
      const badRuntime = await list('runtime=ruby');
      // Assess
      expect(idsOf(deprecated)).toEqual([ids['weatherOld']]);
      expect(idsOf(math)).toEqual([ids['privateOne']]);
      expect(idsOf(python)).toHaveLength(4);
      expect(idsOf(nodejs)).toEqual([]);
      expect(idsOf(named).sort()).toEqual([ids['weatherNow'], ids['weatherOld'], ids['weatherDev']].sort());
      expect(idsOf(combined)).toEqual([ids['weatherNow']]);
      expect(badRuntime.status).toBe(400);
    });

    it('shows others and anonymous callers only public actions out of development', async () => {
      // Act
      const anonymous = await platform.api('GET', '/action/list?nameContains=weather');
      const foreignPublic = await platform.api('GET', '/action/list?visibility=public&category=weather', { token: other.token });
      const anonymousDevelopment = await platform.api('GET', '/action/list?status=development');
      // Assess
      expect(idsOf(anonymous).sort()).toEqual([ids['weatherNow'], ids['weatherOld']].sort());
      expect(idsOf(foreignPublic)).toEqual(expect.arrayContaining([ids['weatherNow'], ids['weatherOld']]));
      expect(idsOf(foreignPublic)).not.toContain(ids['weatherDev']);
      expect(anonymous.body.data.actions.every((a: { visibility: string; status: string }) => a.visibility === 'public' && a.status !== 'development')).toBe(
        true,
      );
      expect(idsOf(anonymousDevelopment)).toEqual([]);
    });

    it('pages with limit and cursor, newest first, and refuses a foreign cursor', async () => {
      // Act
      const first = await platform.api('GET', '/action/list?limit=3', { token: lister.token });
      const second = await platform.api('GET', `/action/list?limit=3&cursor=${first.body.data.nextCursor}`, { token: lister.token });
      const foreign = await platform.api('GET', `/action/list?limit=3&cursor=${first.body.data.nextCursor}`, { token: other.token });
      const filtered = await platform.api('GET', '/action/list?limit=1&category=weather', { token: lister.token });
      const filteredNext = await platform.api('GET', `/action/list?limit=1&category=weather&cursor=${filtered.body.data.nextCursor}`, { token: lister.token });
      // Assess
      expect(idsOf(first)).toEqual([ids['privateOne'], ids['weatherDev'], ids['weatherOld']]);
      expect(first.body.data.nextCursor).toEqual(expect.any(String));
      expect(idsOf(second)).toEqual([ids['weatherNow']]);
      expect(second.body.data.nextCursor).toBeNull();
      expect(foreign.status).toBe(400);
      expect(idsOf(filtered)).toEqual([ids['weatherDev']]);
      expect(idsOf(filteredNext)).toEqual([ids['weatherOld']]);
    });

    it('pages 120 actions by cursor, newest first, each once, with and without a filter', async () => {
      // Prepare: written through the store (no source check), one millisecond apart, two categories.
      const many = await createUser(platform, { alias: 'action-many' });
      const t0 = Date.now();
      const seeded = Array.from({ length: 120 }, (_, i) => actionRecord(many.userId, `act-paged-${i}`, t0 + i, i % 4 === 0 ? 'rare' : 'common'));
      for (const record of seeded) if ((await platform.running.ports.actions.create(record)) !== 'created') throw new Error(record.actionId);
      const newestFirst = (keep: (r: (typeof seeded)[number]) => boolean) =>
        seeded
          .filter(keep)
          .reverse()
          .map((r) => r.actionId);
      // Act
      const all = await walk('/action/list', many.token);
      const rare = await walk('/action/list?category=rare', many.token);
      // Assess
      expect(all.ids).toEqual(newestFirst(() => true));
      expect(all.sizes).toEqual([20, 20, 20, 20, 20, 20]);
      expect(rare.ids).toEqual(newestFirst((r) => r.category === 'rare'));
      expect(rare.sizes.slice(0, 2)).toEqual([20, 10]);
    });
  });

  describe('per-owner limit', () => {
    it('holds an owner to 500 actions under concurrent creates, counting older actions, and gives a place back on delete', async () => {
      // Prepare: 495 actions written straight to the table, as before counters existed.
      const limited = await createUser(platform, { alias: 'action-limited' });
      const ports = platform.running.ports;
      const t0 = Date.now();
      const seeded = Array.from({ length: 495 }, (_, i) => actionRecord(limited.userId, `act-held-${i}`, t0 + i, 'held'));
      for (let i = 0; i < seeded.length; i += 25) {
        const batch = seeded.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        await ports.db.doc.send(new BatchWriteCommand({ RequestItems: { [ports.db.table('actions')]: batch } }));
      }
      const createAs = (extra: Record<string, unknown> = {}) =>
        platform.api('POST', '/action/create', {
          token: limited.token,
          body: { actionName: 'Racer', description: 'race', runtime: 'python3.12', sourceCode: ECHO, category: 'race', ...extra },
        });
      // Act
      const racing = await Promise.all(Array.from({ length: 12 }, () => createAs()));
      const deleted = await platform.api('DELETE', '/action/delete', { token: limited.token, body: { actionId: 'act-held-0' } });
      const takenId = await createAs({ actionId: 'act-held-1' });
      const afterDelete = await createAs();
      const full = await createAs();
      // Assess
      expect(racing.filter((r) => r.status === 200)).toHaveLength(5);
      for (const r of racing.filter((r) => r.status !== 200)) expect(r.body.error.message).toBe('An account may own at most 500 actions.');
      expect(deleted.status).toBe(200);
      expect(takenId.status).toBe(409);
      expect(takenId.body.error.message).toBe('Action id act-held-1 is already taken.');
      expect(afterDelete.status).toBe(200);
      expect(full.status).toBe(409);
      expect(await ports.actions.countByOwner(limited.userId)).toBe(500);
      expect((await walk('/action/list?limit=100', limited.token)).ids).toHaveLength(500);
    });
  });

  describe('running', () => {
    it('passes GET parameters from the query string as strings and POST parameters as JSON, with the context', async () => {
      // Prepare
      const actionId = await create(owner.token, { memoryMb: 256, timeoutSec: 10 });
      // Act
      const viaGet = await platform.api('GET', `/action/${actionId}?city=Paris&days=3`, { token: owner.token });
      const viaPost = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: { city: 'Paris', days: 3, nested: { ok: true } } });
      // Assess
      expect(viaGet.status).toBe(200);
      expect(viaGet.body.success).toBe(true);
      expect(viaGet.body.data.statusCode).toBe(200);
      expect(viaGet.body.data.body.params).toEqual({ city: 'Paris', days: '3' });
      expect(viaPost.body.data.body.params).toEqual({ city: 'Paris', days: 3, nested: { ok: true } });
      expect(viaPost.body.data.body).toMatchObject({ keyNames: [], functionName: actionId, memory: 256 });
      expect(viaPost.body.data.body.requestId).toBe(viaPost.body.meta.requestId);
      expect(viaPost.body.data.body.remaining).toBeGreaterThan(0);
      expect(viaPost.body.data.body.remaining).toBeLessThanOrEqual(10_000);
      expect(viaPost.body.meta).toEqual({
        requestId: viaPost.headers.get('x-request-id'),
        actionId,
        executionTime: expect.any(Number),
        memoryMb: 256,
        creditsUsed: expect.any(Number),
      });
      expect(viaPost.body.meta.creditsUsed).toBeGreaterThanOrEqual(1);
    });

    it('answers the same through the direct runtime route, GET and POST', async () => {
      // Prepare
      const actionId = await create(owner.token, {});
      // Act
      const viaGet = await platform.api('GET', `/action/python-128mb/${actionId}?q=1`, { token: owner.token });
      const viaPost = await platform.api('POST', `/action/python-128mb/${actionId}`, { token: owner.token, body: { q: 1 } });
      // Assess
      expect(viaGet.status).toBe(200);
      expect(viaGet.body.data.body.params).toEqual({ q: '1' });
      expect(viaPost.body.data.body.params).toEqual({ q: 1 });
      expect(Object.keys(viaPost.body.meta).sort()).toEqual(['actionId', 'creditsUsed', 'executionTime', 'memoryMb', 'requestId']);
    });

    it("keeps the handler's own statusCode in data, with success true", async () => {
      const actionId = await create(owner.token, { sourceCode: NOT_FOUND });
      const res = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: {} });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, data: { statusCode: 404, body: { error: 'no such city' } } });
    });

    it('checks declared required parameters first: 400 naming each missing one, nothing billed', async () => {
      // Prepare
      const actionId = await create(owner.token, {
        parameters: [{ name: 'city', type: 'string', required: true }, { name: 'country', required: true }, { name: 'units' }],
      });
      const before = await credits(owner.token);
      // Act
      const viaGet = await platform.api('GET', `/action/${actionId}?city=Paris&units=metric`, { token: owner.token });
      const viaPost = await platform.api('POST', `/action/python-128mb/${actionId}`, { token: owner.token, body: { units: 'metric' } });
      const complete = await platform.api('GET', `/action/${actionId}?city=Paris&country=FR`, { token: owner.token });
      // Assess
      expect(viaGet.status).toBe(400);
      expect(viaGet.body).toMatchObject({
        success: false,
        error: { code: 'INVALID_PARAMETERS', message: 'Missing required parameters: country: is required' },
      });
      expect(viaPost.body.error.message).toBe('Missing required parameters: city: is required; country: is required');
      expect(complete.status).toBe(200);
      expect(await credits(owner.token)).toBeCloseTo(before - complete.body.meta.creditsUsed, 4);
    });

    it("injects the owner's keys named in keysNeeded as event.keys, never logging them", async () => {
      // Prepare
      const keyOwner = await createUser(platform, { alias: 'action-key-owner', credits: 50 });
      await platform.api('POST', '/keys/store', { token: keyOwner.token, body: { serviceName: 'openai', apiKey: 'sk-action-secret-123456' } });
      await platform.api('POST', '/keys/store', { token: keyOwner.token, body: { serviceName: 'unlisted', apiKey: 'sk-not-asked-for-7890' } });
      const actionId = await create(keyOwner.token, { sourceCode: KEY_LENGTHS, keysNeeded: ['openai', 'missing'], visibility: 'public', status: 'active' });
      // Act: run as a caller, with forged keys in the parameters
      const own = await platform.api('POST', `/action/${actionId}`, { token: keyOwner.token, body: { keys: { openai: 'forged' } } });
      const foreign = await platform.api('GET', `/action/${actionId}?keys=forged`, { token: other.token });
      const ownLogs = await platform.api('GET', `/logs?resourceId=${actionId}`, { token: keyOwner.token });
      const detail = await platform.api('GET', `/logs/${own.body.meta.requestId}`, { token: keyOwner.token });
      // Assess
      expect(own.body.data.body).toEqual({ openai: 'sk-action-secret-123456'.length });
      expect(foreign.body.data.body).toEqual({ openai: 'sk-action-secret-123456'.length });
      expect(ownLogs.body.data.logs).toHaveLength(1);
      expect(detail.body.data).toMatchObject({ resourceType: 'action', status: 'success', request: { body: {} } });
      expect(JSON.stringify(ownLogs.body) + JSON.stringify(detail.body)).not.toContain('sk-action-secret');
    });

    it('writes one usage record per run and debits the caller by the formula', async () => {
      // Prepare
      const payer = await createUser(platform, { alias: 'action-payer', credits: 20 });
      // A 5 s timeout: the worst case held before the run (5.9 credits) must fit the balance.
      const actionId = await create(payer.token, { sourceCode: SLOW_ECHO, memoryMb: 1024, timeoutSec: 5 });
      // Act
      const run = await platform.api('POST', `/action/${actionId}`, { token: payer.token, body: { a: 1, seconds: 0.35 } });
      const balance = await credits(payer.token);
      const logs = await platform.api('GET', `/logs?resourceId=${actionId}`, { token: payer.token });
      const detail = await platform.api('GET', `/logs/${run.body.meta.requestId}`, { token: payer.token });
      // Assess: 1 + 1024/1024 × (seconds rounded up to 0.1 s, less the first 0.1 s)
      const expected = Math.round((1 + (Math.max(1, Math.ceil(run.body.meta.executionTime / 100)) - 1) / 10) * 10_000) / 10_000;
      expect(run.body.meta.executionTime).toBeGreaterThanOrEqual(350);
      expect(expected).toBeGreaterThanOrEqual(1.3);
      expect(run.body.meta.creditsUsed).toBe(expected);
      expect(balance).toBeCloseTo(20 - expected, 4);
      expect(logs.body.data.logs).toHaveLength(1);
      expect(logs.body.data.logs[0]).toMatchObject({
        resourceType: 'action',
        requestType: 'ACTION_RUN',
        status: 'success',
        creditsUsed: expected,
        metrics: { memoryMb: 1024 },
      });
      expect(detail.body.data.request.body).toEqual({ a: 1, seconds: 0.35 });
      expect(detail.body.data.response.body).toMatchObject({ statusCode: 200, body: { params: { a: 1, seconds: 0.35 } } });
    });

    it('bills concurrent runs exactly: each holds, gives back the rest, and leaves its ledger lines and usage record', async () => {
      // Prepare
      const payer = await createUser(platform, { alias: 'action-concurrent', credits: 50 });
      const actionId = await create(payer.token, {});
      // Act: the refund and the usage record of each run are written together, runs overlap
      const runs = await Promise.all(Array.from({ length: 6 }, (_, n) => platform.api('POST', `/action/${actionId}`, { token: payer.token, body: { n } })));
      const account = await platform.api('GET', '/user/credits', { token: payer.token });
      const logs = await platform.api('GET', `/logs?resourceId=${actionId}&pageSize=20`, { token: payer.token });
      // Assess
      expect(runs.map((r) => r.status)).toEqual(Array(6).fill(200));
      const used = runs.reduce((total, r) => total + (r.body.meta.creditsUsed as number), 0);
      expect(used).toBeGreaterThan(0);
      expect(account.body.data.credits).toBeCloseTo(50 - used, 4);
      const lines = (account.body.data.recentEntries as { amount: number; requestId: string | null }[]).filter((e) =>
        runs.some((r) => r.body.meta.requestId === e.requestId),
      );
      // One hold and one give-back per run, which together come to what the run used.
      expect(lines).toHaveLength(12);
      for (const run of runs) {
        const own = lines.filter((e) => e.requestId === run.body.meta.requestId);
        expect(own.map((e) => Math.sign(e.amount)).sort()).toEqual([-1, 1]);
        expect(own.reduce((total, e) => total + e.amount, 0)).toBeCloseTo(-run.body.meta.creditsUsed, 4);
      }
      expect(logs.body.data.logs.map((l: { requestId: string }) => l.requestId).sort()).toEqual(runs.map((r) => r.body.meta.requestId).sort());
    });

    it('refuses a caller without credits with 402 before running', async () => {
      const broke = await createUser(platform, { alias: 'action-broke' });
      const actionId = await create(owner.token, { visibility: 'public', status: 'active' });
      const res = await platform.api('POST', `/action/${actionId}`, { token: broke.token, body: {} });
      expect(res.status).toBe(402);
      expect(res.body.error.code).toBe('INSUFFICIENT_CREDITS');
    });
  });

  describe('who may run what', () => {
    it('lets owners run any status, others only public non-development actions; deprecated ones say so', async () => {
      // Prepare
      const privateActive = await create(owner.token, { status: 'active' });
      const publicDevelopment = await create(owner.token, { visibility: 'public', status: 'development' });
      const publicActive = await create(owner.token, { visibility: 'public', status: 'active' });
      const publicDeprecated = await create(owner.token, { visibility: 'public', status: 'deprecated' });
      const run = (token: string | undefined, actionId: string) => platform.api('POST', `/action/${actionId}`, { ...(token ? { token } : {}), body: {} });
      // Act
      const ownDevelopment = await run(owner.token, publicDevelopment);
      const ownPrivate = await run(owner.token, privateActive);
      const foreignPrivate = await run(other.token, privateActive);
      const foreignDevelopment = await run(other.token, publicDevelopment);
      const foreignActive = await run(other.token, publicActive);
      const foreignDeprecated = await run(other.token, publicDeprecated);
      const anonymous = await run(undefined, publicActive);
      const foreignInfoPrivate = await platform.api('GET', `/action/info/${privateActive}`, { token: other.token });
      const anonymousInfoPublic = await platform.api('GET', `/action/info/${publicActive}`);
      // Assess
      expect(ownDevelopment.status).toBe(200);
      expect(ownPrivate.status).toBe(200);
      expect(foreignPrivate.status).toBe(403);
      expect(foreignPrivate.body.error.code).toBe('ACCESS_DENIED');
      expect(foreignDevelopment.status).toBe(403);
      expect(foreignActive.status).toBe(200);
      expect(foreignActive.body.meta.deprecated).toBeUndefined();
      expect(foreignDeprecated.status).toBe(200);
      expect(foreignDeprecated.body.meta).toMatchObject({ deprecated: true, notice: expect.stringContaining('deprecated') });
      expect(anonymous.status).toBe(401);
      expect(foreignInfoPrivate.status).toBe(403);
      expect(anonymousInfoPublic.status).toBe(200);
      expect(anonymousInfoPublic.body.data.sourceCode).toBe(ECHO);
    });

    it('accepts legacy query-string credentials on GET without passing them to the handler', async () => {
      const actionId = await create(owner.token, {});
      const res = await platform.api('GET', `/action/${actionId}?userId=${owner.userId}&secretServiceKey=${owner.secretKey}&city=Oslo`);
      expect(res.status).toBe(200);
      expect(res.body.data.body.params).toEqual({ city: 'Oslo' });
    });
  });

  describe('failures', () => {
    it('answers a raising handler with 500 ACTION_EXECUTION_FAILED, logs the error, and keeps the runtime healthy', async () => {
      // Prepare
      const raising = await create(owner.token, { sourceCode: RAISING });
      const healthy = await create(owner.token, {});
      // Act
      const failed = await platform.api('POST', `/action/${raising}`, { token: owner.token, body: {} });
      const logs = await platform.api('GET', `/logs?resourceId=${raising}`, { token: owner.token });
      const next = await platform.api('POST', `/action/${healthy}`, { token: owner.token, body: { after: 'failure' } });
      // Assess
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({
        success: false,
        error: { code: 'ACTION_EXECUTION_FAILED', message: "The handler raised KeyError: 'missing' (line 2)." },
      });
      expect(failed.text).not.toMatch(/Traceback|platform_runtime/);
      expect(logs.body.data.logs[0]).toMatchObject({ status: 'error', error: { code: 'ACTION_EXECUTION_FAILED' } });
      expect(next.body.data.body.params).toEqual({ after: 'failure' });
    });

    it('answers a result without statusCode with 500 INVALID_HANDLER_RESULT', async () => {
      const actionId = await create(owner.token, { sourceCode: NO_STATUS });
      const res = await platform.api('POST', `/action/python-128mb/${actionId}`, { token: owner.token, body: {} });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('INVALID_HANDLER_RESULT');
      expect(res.body.error.message).toContain('statusCode');
    });

    it('stops a run over its memory limit with 500 MEMORY_LIMIT_EXCEEDED; a run within it works', async () => {
      // Prepare
      const actionId = await create(owner.token, { sourceCode: MEMORY_HOG, memoryMb: 128 });
      // Act
      const over = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: { mb: 1024 } });
      const within = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: { mb: 8 } });
      const logs = await platform.api('GET', `/logs?resourceId=${actionId}&status=error`, { token: owner.token });
      // Assess
      expect(over.status).toBe(500);
      expect(over.body.error).toEqual({ code: 'MEMORY_LIMIT_EXCEEDED', message: 'The run exceeded its memory limit of 128 MB.' });
      expect(within.body.data.body).toBe(8 * 1024 * 1024);
      expect(logs.body.data.logs).toHaveLength(1);
      expect(logs.body.data.logs[0].error.code).toBe('MEMORY_LIMIT_EXCEEDED');
    });

    it("times out with 504 on the router path at the action's limit, and the direct path honours the action's own timeout", async () => {
      // Prepare
      const short = await create(owner.token, { sourceCode: SLEEPER, timeoutSec: 1 });
      const longer = await create(owner.token, { sourceCode: SLEEPER, timeoutSec: 4 });
      // Act
      const startedAt = performance.now();
      const routerTimeout = await platform.api('POST', `/action/${short}`, { token: owner.token, body: { seconds: 5 } });
      const routerElapsed = performance.now() - startedAt;
      const directTimeout = await platform.api('GET', `/action/python-128mb/${short}?seconds=5`, { token: owner.token });
      const directWithin = await platform.api('POST', `/action/python-128mb/${longer}`, { token: owner.token, body: { seconds: 1.5 } });
      const logs = await platform.api('GET', `/logs?resourceId=${short}&status=timeout`, { token: owner.token });
      // Assess
      expect(routerTimeout.status).toBe(504);
      expect(routerTimeout.body).toMatchObject({
        success: false,
        error: { code: 'TIMEOUT', message: 'The action did not finish within its timeout of 1 second.' },
      });
      expect(routerElapsed).toBeLessThan(4000);
      expect(directTimeout.status).toBe(504);
      expect(directWithin.status).toBe(200);
      expect(directWithin.body.data.body).toBe('awake');
      expect(directWithin.body.meta.executionTime).toBeGreaterThanOrEqual(1500);
      expect(logs.body.data.logs).toHaveLength(2);
    });

    it('runs concurrent calls of one action independently', async () => {
      // Prepare
      const actionId = await create(owner.token, {});
      // Act
      const runs = await Promise.all(Array.from({ length: 8 }, (_, n) => platform.api('POST', `/action/${actionId}`, { token: owner.token, body: { n } })));
      // Assess
      expect(runs.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(runs.map((r) => r.body.data.body.params.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(runs.map((r) => r.body.meta.requestId)).size).toBe(8);
      expect(runs.every((r) => r.body.data.body.requestId === r.body.meta.requestId)).toBe(true);
    });

    it('answers 404 for an unknown action and 400 for a malformed id', async () => {
      const unknown = await platform.api('POST', '/action/act-doesnotexist', { token: owner.token, body: {} });
      const malformed = await platform.api('GET', '/action/info/not-an-action', { token: owner.token });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('ACTION_NOT_FOUND');
      expect(malformed.status).toBe(400);
    });
  });

  describe('inline code', () => {
    const inline = (token: string | undefined, body: Record<string, unknown>) =>
      platform.api('POST', '/action/python-128mb/inline-code', { ...(token ? { token } : {}), body });

    it('runs code without creating an action, with the execution result shape', async () => {
      // Prepare
      const ownedBefore = (await platform.api('GET', '/action/list?limit=100', { token: owner.token })).body.data.count;
      // Act
      const res = await inline(owner.token, { code: ECHO, event: { x: 1 }, timeout: 5, memory: 256 });
      const ownedAfter = (await platform.api('GET', '/action/list?limit=100', { token: owner.token })).body.data.count;
      const logs = await platform.api('GET', '/logs?resourceId=inline-code', { token: owner.token });
      // Assess
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        data: { statusCode: 200, body: { params: { x: 1 }, keyNames: [], functionName: 'inline-code', memory: 256 } },
      });
      expect(res.body.meta).toMatchObject({ requestId: expect.any(String), executionTime: expect.any(Number), memoryMb: 256, creditsUsed: expect.any(Number) });
      expect(res.body.data.body.remaining).toBeLessThanOrEqual(5000);
      expect(ownedAfter).toBe(ownedBefore);
      expect(logs.body.data.logs[0]).toMatchObject({ resourceType: 'action', requestType: 'ACTION_INLINE', status: 'success' });
    });

    it('applies the same checks and limits: violations with lines, timeout and memory, alias, errors', async () => {
      // Prepare
      const noAlias = await createUser(platform, { credits: 10 });
      // Act
      const violations = await inline(owner.token, { code: 'import os\n\ndef handler(event, context):\n    return open("/etc/passwd")\n', event: {} });
      const limits = await inline(owner.token, { code: ECHO, timeout: 301, memory: 64 });
      const aliasless = await inline(noAlias.token, { code: ECHO });
      const anonymous = await inline(undefined, { code: ECHO });
      const raising = await inline(owner.token, { code: RAISING });
      const timedOut = await inline(owner.token, { code: SLEEPER, event: { seconds: 5 }, timeout: 1 });
      // Assess
      expect(violations.status).toBe(400);
      expect(violations.body.error.message).toMatch(/code: line 1: .*os/);
      expect(violations.body.error.message).toMatch(/code: line 4: .*open/);
      expect(limits.status).toBe(400);
      expect(limits.body.error.message).toContain('timeout');
      expect(limits.body.error.message).toContain('memory');
      expect(aliasless.status).toBe(403);
      expect(aliasless.body.error.code).toBe('ALIAS_REQUIRED');
      expect(anonymous.status).toBe(401);
      expect(raising.status).toBe(500);
      expect(raising.body.error.code).toBe('ACTION_EXECUTION_FAILED');
      expect(timedOut.status).toBe(504);
      expect(timedOut.body.error.message).toBe('The code did not finish within its timeout of 1 second.');
    });
  });
});
