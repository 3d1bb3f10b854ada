/**
 * The task board over HTTP on the real local platform: every route, filter, sort and page, the
 * validation rules (a 400 naming the field), privacy (another user's task is a 404), concurrent
 * edits of one task (exactly one lands, the others get 409) and bulk operations reported one by one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('the task board', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let stranger: { userId: string; token: string };

  const create = async (token: string, body: Record<string, unknown>) => {
    platform.clock.advance(2);
    return platform.api('POST', '/tasks', { token, body });
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform);
    stranger = await createUser(platform);
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('creates, reads, updates, sets the status of and deletes a task, with defaults and every field', async () => {
    // Act
    const minimal = await create(owner.token, { title: '  Write the report  ' });
    const full = await create(owner.token, {
      title: 'Ship it',
      description: 'all of it',
      status: 'in_progress',
      priority: 'high',
      dueAt: '2026-12-01T17:00:00+01:00',
      tags: ['release', 'release', 'q4'],
      resourceId: '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
    });
    const id = full.body.data.taskId as string;
    const read = await platform.api('GET', `/tasks/${id}`, { token: owner.token });
    const updated = await platform.api('PUT', `/tasks/${id}`, { token: owner.token, body: { version: 1, title: 'Ship it now', dueAt: null, tags: [] } });
    const status = await platform.api('PUT', `/tasks/${id}/status`, { token: owner.token, body: { status: 'done', version: 2 } });
    const deleted = await platform.api('DELETE', `/tasks/${id}`, { token: owner.token });
    const gone = await platform.api('GET', `/tasks/${id}`, { token: owner.token });

    // Assess
    expect(minimal.status, minimal.text).toBe(201);
    expect(minimal.body.data).toEqual({
      taskId: expect.stringMatching(/^task_[0-9A-Za-z]{21}$/),
      title: 'Write the report',
      description: '',
      status: 'todo',
      priority: 'medium',
      dueAt: null,
      tags: [],
      resourceId: null,
      createdAt: expect.any(String),
      updatedAt: minimal.body.data.createdAt,
      version: 1,
    });
    expect(full.body.data).toMatchObject({ status: 'in_progress', priority: 'high', dueAt: '2026-12-01T16:00:00.000Z', tags: ['release', 'q4'] });
    expect(read.body.data).toEqual(full.body.data);
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toMatchObject({ title: 'Ship it now', dueAt: null, tags: [], description: 'all of it', priority: 'high', version: 2 });
    expect(status.body.data).toMatchObject({ status: 'done', version: 3, title: 'Ship it now' });
    expect(deleted.body.data).toEqual({ taskId: id, deleted: true });
    expect(gone.status).toBe(404);
  });

  it('keeps tasks private: another user reads, changes and deletes none of them', async () => {
    // Prepare
    const task = (await create(owner.token, { title: 'mine' })).body.data;

    // Act
    const attempts = await Promise.all([
      platform.api('GET', `/tasks/${task.taskId}`, { token: stranger.token }),
      platform.api('PUT', `/tasks/${task.taskId}`, { token: stranger.token, body: { version: 1, title: 'theirs' } }),
      platform.api('PUT', `/tasks/${task.taskId}/status`, { token: stranger.token, body: { version: 1, status: 'done' } }),
      platform.api('DELETE', `/tasks/${task.taskId}`, { token: stranger.token }),
    ]);
    const theirList = await platform.api('GET', '/tasks', { token: stranger.token });
    const anonymous = await platform.api('GET', '/tasks');
    const still = await platform.api('GET', `/tasks/${task.taskId}`, { token: owner.token });

    // Assess
    expect(attempts.map((res) => res.status)).toEqual([404, 404, 404, 404]);
    expect(theirList.body.data.tasks).toEqual([]);
    expect(anonymous.status).toBe(401);
    expect(still.body.data).toEqual(task);
  });

  it('lets exactly one of concurrent edits made from the same read land; the others get 409', async () => {
    // Prepare
    const task = (await create(owner.token, { title: 'contended' })).body.data;

    // Act: eight edits from version 1 at once, then a stale delete
    const edits = await Promise.all(
      Array.from({ length: 8 }, (_, i) => platform.api('PUT', `/tasks/${task.taskId}`, { token: owner.token, body: { version: 1, title: `edit ${i}` } })),
    );
    const final = await platform.api('GET', `/tasks/${task.taskId}`, { token: owner.token });
    const staleDelete = await platform.api('DELETE', `/tasks/${task.taskId}?version=1`, { token: owner.token });
    const staleStatus = await platform.api('PUT', `/tasks/${task.taskId}/status`, { token: owner.token, body: { version: 1, status: 'done' } });

    // Assess
    const landed = edits.filter((res) => res.status === 200);
    expect(landed).toHaveLength(1);
    expect(edits.filter((res) => res.status === 409)).toHaveLength(7);
    expect(edits.find((res) => res.status === 409)!.body).toMatchObject({ code: 'TASK_VERSION_CONFLICT' });
    expect(final.body.data).toMatchObject({ title: landed[0]!.body.data.title, version: 2 });
    expect(staleDelete.status).toBe(409);
    expect(staleStatus.status).toBe(409);
  });

  it('filters by status, tag, priority and resourceId, sorts four ways and pages with limit and cursor', async () => {
    // Prepare: a user of their own, so the board holds exactly these
    const user = await createUser(platform);
    const made: any[] = [];
    for (const [i, fields] of [
      { priority: 'low', status: 'todo', tags: ['a'], dueAt: '2027-01-03T00:00:00Z' },
      { priority: 'high', status: 'done', tags: ['a', 'b'], resourceId: 'agent-1' },
      { priority: 'medium', status: 'todo', tags: ['b'], dueAt: '2027-01-01T00:00:00Z' },
      { priority: 'high', status: 'todo', tags: [], dueAt: '2027-01-02T00:00:00Z', resourceId: 'agent-1' },
      { priority: 'low', status: 'cancelled', tags: ['a'] },
    ].entries()) {
      made.push((await create(user.token, { title: `t${i}`, ...fields })).body.data);
    }
    // The first task changed last.
    await platform.api('PUT', `/tasks/${made[0].taskId}`, { token: user.token, body: { version: 1, description: 'touched' } });
    const titles = async (query: string) => {
      const res = await platform.api('GET', `/tasks?${query}`, { token: user.token });
      expect(res.status, res.text).toBe(200);
      return (res.body.data.tasks as any[]).map((t) => t.title);
    };

    // Act
    const newest = await titles('');
    const oldest = await titles('order=asc');
    const byUpdate = await titles('sort=updatedAt');
    const byDue = await titles('sort=dueAt');
    const byPriority = await titles('sort=priority');
    const todo = await titles('status=todo');
    const tagged = await titles('tag=a');
    const high = await titles('priority=high');
    const linked = await titles('resourceId=agent-1');
    const combined = await titles('status=todo&tag=a&priority=low');
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res: any = await platform.api('GET', `/tasks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: user.token });
      pages.push(res.body.data.tasks.map((t: any) => t.title));
      cursor = res.body.data.nextCursor;
    } while (cursor !== null);
    const firstPage = await platform.api('GET', '/tasks?limit=2', { token: user.token });
    const foreignCursor = await platform.api('GET', `/tasks?limit=2&cursor=${encodeURIComponent(firstPage.body.data.nextCursor)}`, { token: owner.token });
    const otherSortCursor = await platform.api('GET', `/tasks?sort=dueAt&cursor=${encodeURIComponent(firstPage.body.data.nextCursor)}`, { token: user.token });

    // Assess
    expect(newest).toEqual(['t4', 't3', 't2', 't1', 't0']);
    expect(oldest).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(byUpdate[0]).toBe('t0');
    expect(byDue).toEqual(['t2', 't3', 't0', 't1', 't4']);
    expect(byPriority).toEqual(['t3', 't1', 't2', 't4', 't0']);
    expect(todo).toEqual(['t3', 't2', 't0']);
    expect(tagged).toEqual(['t4', 't1', 't0']);
    expect(high).toEqual(['t3', 't1']);
    expect(linked).toEqual(['t3', 't1']);
    expect(combined).toEqual(['t0']);
    expect(pages).toEqual([['t4', 't3'], ['t2', 't1'], ['t0']]);
    expect(foreignCursor.status).toBe(400);
    expect(otherSortCursor.status).toBe(400);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    // Prepare
    const task = (await create(owner.token, { title: 'valid' })).body.data;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/tasks', {}, 'title'],
      ['POST', '/tasks', { title: '' }, 'title'],
      ['POST', '/tasks', { title: 'x'.repeat(201) }, 'title'],
      ['POST', '/tasks', { title: 'x', status: 'doing' }, 'status'],
      ['POST', '/tasks', { title: 'x', priority: 'urgent' }, 'priority'],
      ['POST', '/tasks', { title: 'x', dueAt: 'tomorrow' }, 'dueAt'],
      ['POST', '/tasks', { title: 'x', tags: 'a' }, 'tags'],
      ['POST', '/tasks', { title: 'x', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      ['POST', '/tasks', { title: 'x', resourceId: 'no spaces' }, 'resourceId'],
      ['POST', '/tasks', { title: 'x', description: 'd'.repeat(10_001) }, 'description'],
      ['POST', '/tasks', { title: 'x', owner: 'someone' }, 'owner'],
      ['PUT', `/tasks/${task.taskId}`, { title: 'no version' }, 'version'],
      ['PUT', `/tasks/${task.taskId}`, { version: 1 }, 'body'],
      ['PUT', `/tasks/${task.taskId}/status`, { version: 1, status: 'finished' }, 'status'],
      ['GET', '/tasks/not-a-task', undefined, 'taskId'],
      ['GET', '/tasks?status=doing', undefined, 'status'],
      ['GET', '/tasks?sort=title', undefined, 'sort'],
      ['GET', '/tasks?limit=101', undefined, 'limit'],
      ['GET', '/tasks?order=up', undefined, 'order'],
      ['DELETE', `/tasks/${task.taskId}?version=x`, undefined, 'version'],
    ];

    // Act
    const responses = await Promise.all(
      cases.map(([method, path, body]) => platform.api(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) })),
    );

    // Assess
    responses.forEach((res, i) => {
      expect(res.status, `${cases[i]![1]} ${JSON.stringify(cases[i]![2])}: ${res.text}`).toBe(400);
      expect(res.body.error, res.text).toContain(cases[i]![3]);
    });
  });

  it('applies bulk operations one by one, reporting each, and refuses more than 100', async () => {
    // Prepare
    const user = await createUser(platform);
    const kept = (await create(user.token, { title: 'to change' })).body.data;
    const doomed = (await create(user.token, { title: 'to delete' })).body.data;

    // Act
    const bulk = await platform.api('POST', '/tasks/bulk', {
      token: user.token,
      body: {
        create: [{ title: 'new one', tags: ['bulk'] }, { title: '' }, { title: 'new two', priority: 'high' }],
        update: [
          { taskId: kept.taskId, version: 1, status: 'in_progress' },
          { taskId: kept.taskId, version: 1, status: 'done' },
          { taskId: 'task_000000000000000000000', version: 1, title: 'missing' },
        ],
        delete: [{ taskId: doomed.taskId }, { taskId: doomed.taskId }, 'not an object'],
      },
    });
    const board = await platform.api('GET', '/tasks?order=asc', { token: user.token });
    const tooMany = await platform.api('POST', '/tasks/bulk', {
      token: user.token,
      body: { create: Array.from({ length: 101 }, (_, i) => ({ title: `t${i}` })) },
    });
    const empty = await platform.api('POST', '/tasks/bulk', { token: user.token, body: {} });
    const hundred = await platform.api('POST', '/tasks/bulk', {
      token: user.token,
      body: { create: Array.from({ length: 99 }, (_, i) => ({ title: `many ${i}` })), delete: [{ taskId: kept.taskId, version: 2 }] },
    });

    // Assess
    expect(bulk.status, bulk.text).toBe(200);
    const data = bulk.body.data;
    expect(data.create.map((r: any) => [r.index, r.ok])).toEqual([
      [0, true],
      [1, false],
      [2, true],
    ]);
    expect(data.create[1].error).toMatchObject({ status: 400, code: 'INVALID_PARAMETERS', message: expect.stringContaining('title') });
    expect(data.update.map((r: any) => r.ok)).toEqual([true, false, false]);
    expect(data.update[1]).toMatchObject({ taskId: kept.taskId, error: { status: 409, code: 'TASK_VERSION_CONFLICT' } });
    expect(data.update[2].error).toMatchObject({ status: 404, code: 'TASK_NOT_FOUND' });
    expect(data.delete.map((r: any) => r.ok)).toEqual([true, false, false]);
    expect(data.delete[1].error.status).toBe(404);
    expect(data.delete[2].error.status).toBe(400);
    expect(data).toMatchObject({ succeeded: 4, failed: 5 });
    expect(board.body.data.tasks.map((t: any) => [t.title, t.status])).toEqual([
      ['to change', 'in_progress'],
      ['new one', 'todo'],
      ['new two', 'todo'],
    ]);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toContain('at most 100 operations');
    expect(empty.status).toBe(400);
    expect(hundred.body.data).toMatchObject({ succeeded: 100, failed: 0 });
  });
});
