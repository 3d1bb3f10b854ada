import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cronArea } from '../../functions/cron/cron.module.ts';
import { entryPointsOf } from '../../lib/manifest/define.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** The runtime's own plain-Python test agents (python-runtime/tests/fixtures). */
const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
const ECHO = fixture('echo_agent');
const RAISING = fixture('raising_agent');
/** Fails with the owner's stored key in its exception: what reaches the job must not hold it. */
const LEAKING = `import json


class LeakingAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": "about to fail"}
        raise ValueError("broke holding " + json.loads(SVC_KEYS_JSON)["openai"])


def create_agent():
    return LeakingAgent(), []
`;

type User = Awaited<ReturnType<typeof createUser>>;
/** The queue entry point every job's schedule sends its due times to. */
const RUN_QUEUE = entryPointsOf(cronArea, 'queue')[0]!;
/** Delivers one due time of a job as its schedule would (the local scheduler sends exactly this). */
const deliverDueTime = async (platform: TestPlatform, cronId: string, scheduledTime: string) => {
  await platform.running.tasks.enqueue(RUN_QUEUE, JSON.stringify({ cronId, scheduledTime }), 0);
  await platform.running.tasks.idle();
};

/** Cron jobs over HTTP against the real local platform (SPEC 4.8, parts 3, 5.8 and 8). */
describe('cron jobs', () => {
  let platform: TestPlatform;
  let owner: User;
  let echoId: string;
  let raisingId: string;

  const createAgent = async (user: User, agentName: string, sourceCode: string, visibility = 'private') => {
    const res = await platform.api('POST', '/agent/create', { token: user.token, body: { agentName, description: agentName, sourceCode, visibility } });
    expect(res.status).toBe(200);
    return res.body.data.agentId as string;
  };
  const createJob = (user: User, body: Record<string, unknown>) => platform.api('POST', '/cron', { token: user.token, body });
  /** Polls a condition the platform reaches by itself (a scheduled run), never a wall-clock assertion. */
  const eventually = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > until) return value;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'cron-owner', credits: 100 });
    echoId = await createAgent(owner, 'cron-echo', ECHO);
    raisingId = await createAgent(owner, 'cron-raising', RAISING);
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it.each([
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(2 days)',
    'cron(0 8 * * ? *)',
    'cron(0/15 9-17 ? * MON-FRI *)',
    'cron(0 8 L * ? *)',
    'cron(0 8 LW * ? *)',
    'cron(0 8 15W * ? *)',
    'cron(0 8 ? * 6L *)',
    'cron(0 8 ? * 2#1 *)',
    'cron(0 8 1 JAN,JUL ? 2030-2040)',
  ])('accepts %s and answers its next run time', async (schedule) => {
    // Act
    const created = await createJob(owner, { name: `job ${schedule}`, agentId: echoId, schedule, scheduleTimezone: 'Europe/Paris' });
    await platform.api('DELETE', `/cron/${created.body.data?.cronId}`, { token: owner.token });

    // Assess
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ schedule, scheduleTimezone: 'Europe/Paris', status: 'active', consecutiveFailures: 0 });
    expect(Date.parse(created.body.data.nextRunAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it.each([
    ['rate(1 minutes)', /rate\(1 minutes\)/],
    ['rate(5 minute)', /rate\(5 minute\)/],
    ['rate(0 minutes)', /rate\(0 minutes\)/],
    ['rate(2 weeks)', /rate\(2 weeks\)/],
    ['cron(0 8 * * *)', /six fields/],
    ['cron(0 8 * * MON *)', /exactly one of day-of-month and day-of-week/],
    ['cron(0 8 ? * 2/2 *)', /day-of-week/],
    ['cron(0 24 * * ? *)', /hours \\"24\\"/],
    ['cron(0 8 ? * 2#6 *)', /2#6/],
    ['0 8 * * *', /0 8 \* \* \*/],
  ])('refuses %s with a 400 naming the expression', async (schedule, message) => {
    // Act
    const res = await createJob(owner, { name: 'bad', agentId: echoId, schedule });

    // Assess
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(message);
  });

  it.each(['cron(0 8 1 1 ? 2020)', 'cron(0 8 1 1 ? 2020-2025)'])('refuses %s, whose year range has ended, with a 400 saying so', async (schedule) => {
    // Prepare: a job to change to it
    const kept = await createJob(owner, { name: 'kept', agentId: echoId, schedule: 'rate(1 day)' });

    // Act
    const created = await createJob(owner, { name: 'ended', agentId: echoId, schedule });
    const changed = await platform.api('PUT', `/cron/${kept.body.data.cronId}`, { token: owner.token, body: { schedule } });
    const after = await platform.api('GET', `/cron/${kept.body.data.cronId}`, { token: owner.token });
    await platform.api('DELETE', `/cron/${kept.body.data.cronId}`, { token: owner.token });

    // Assess
    for (const res of [created, changed]) {
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/has no run after .* its year range has ended/);
    }
    expect(after.body.data).toMatchObject({ schedule: 'rate(1 day)', status: 'active' });
  });

  it('refuses a time zone that is not IANA, a missing field, and an agent the owner may not chat with', async () => {
    // Prepare: another user's private agent
    const other = await createUser(platform, { alias: 'cron-other', credits: 10 });
    const private_ = await createAgent(other, 'cron-private', ECHO);

    // Act
    const zone = await createJob(owner, { name: 'z', agentId: echoId, schedule: 'cron(0 8 * * ? *)', scheduleTimezone: 'Mars/Olympus' });
    const missing = await createJob(owner, { name: 'm', agentId: echoId });
    const foreign = await createJob(owner, { name: 'f', agentId: private_, schedule: 'rate(1 hour)' });

    // Assess
    expect(zone.status).toBe(400);
    expect(JSON.stringify(zone.body)).toMatch(/scheduleTimezone.*Mars\/Olympus/);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/schedule/);
    expect(foreign.status).toBe(400);
    expect(JSON.stringify(foreign.body)).toMatch(/agentId/);
  });

  it('holds at most 20 jobs per user, also under concurrent creates', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'cron-limit', credits: 10 });
    const agentId = await createAgent(user, 'limit-echo', ECHO);

    // Act
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => createJob(user, { name: `j${i}`, agentId, schedule: 'rate(1 day)' })));
    const list = await platform.api('GET', '/cron', { token: user.token });

    // Assess
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 400 && /at most 20 cron jobs/.test(JSON.stringify(r.body)))).toBe(true);
    expect(list.body.data.count).toBe(20);
  });

  it('runs now as the owner through the chat, and lists, reads, updates and deletes a job; others get 404', async () => {
    // Prepare
    const created = await createJob(owner, {
      name: 'morning',
      agentId: echoId,
      schedule: 'cron(0 8 * * ? *)',
      scheduleTimezone: 'Europe/Berlin',
      inputMessage: 'good morning',
    });
    const cronId = created.body.data.cronId as string;
    const stranger = await createUser(platform, { alias: 'cron-stranger', credits: 10 });

    // Act
    const run = await platform.api('POST', `/cron/${cronId}/run`, { token: owner.token });
    const got = await platform.api('GET', `/cron/${cronId}`, { token: owner.token });
    const list = await platform.api('GET', '/cron', { token: owner.token });
    const strangerGet = await platform.api('GET', `/cron/${cronId}`, { token: stranger.token });
    const strangerPut = await platform.api('PUT', `/cron/${cronId}`, { token: stranger.token, body: { name: 'mine' } });
    const strangerRun = await platform.api('POST', `/cron/${cronId}/run`, { token: stranger.token });
    const renamed = await platform.api('PUT', `/cron/${cronId}`, { token: owner.token, body: { name: 'early', schedule: 'cron(0 6 * * ? *)' } });
    const badPut = await platform.api('PUT', `/cron/${cronId}`, { token: owner.token, body: { status: 'error' } });
    const deleted = await platform.api('DELETE', `/cron/${cronId}`, { token: owner.token });
    const gone = await platform.api('GET', `/cron/${cronId}`, { token: owner.token });

    // Assess
    expect(run.status).toBe(200);
    expect(run.body.data).toMatchObject({ status: 'success', response: 'echo: good morning' });
    expect(run.body.data.requestId).toEqual(expect.any(String));
    expect(got.body.data).toMatchObject({ lastRunStatus: 'success', consecutiveFailures: 0, lastRunError: null, agentName: 'cron-echo' });
    expect(got.body.data.lastRunAt).toEqual(expect.any(String));
    expect(list.body.data.crons.map((c: { cronId: string }) => c.cronId)).toContain(cronId);
    expect([strangerGet.status, strangerPut.status, strangerRun.status]).toEqual([404, 404, 404]);
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'early', schedule: 'cron(0 6 * * ? *)' });
    expect(new Date(renamed.body.data.nextRunAt).getUTCMinutes()).toBe(0);
    expect(badPut.status).toBe(400);
    expect(JSON.stringify(badPut.body)).toMatch(/status/);
    expect(deleted.body.data).toEqual({ cronId, deleted: true });
    expect(gone.status).toBe(404);
  });

  it('counts failures: the third moves the job to error and disables its schedule; resuming resets it', async () => {
    // Prepare
    // A schedule that cannot fire during the test: its own run would be a fourth failure.
    const created = await createJob(owner, { name: 'breaks', agentId: raisingId, schedule: 'rate(1 day)' });
    const cronId = created.body.data.cronId as string;

    // Act
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await platform.api('POST', `/cron/${cronId}/run`, { token: owner.token }));
    const broken = await platform.api('GET', `/cron/${cronId}`, { token: owner.token });
    await deliverDueTime(platform, cronId, new Date(Date.now() + 60_000).toISOString());
    const afterDue = await platform.api('GET', `/cron/${cronId}`, { token: owner.token });
    const resumed = await platform.api('PUT', `/cron/${cronId}`, { token: owner.token, body: { status: 'active' } });
    const paused = await platform.api('PUT', `/cron/${cronId}`, { token: owner.token, body: { status: 'paused' } });

    // Assess
    expect(runs.map((r) => r.body.data.status)).toEqual(['error', 'error', 'error']);
    expect(runs[0]!.body.data.error).toMatch(/broke on purpose/);
    expect(broken.body.data).toMatchObject({ status: 'error', consecutiveFailures: 3, lastRunStatus: 'error', nextRunAt: null });
    expect(broken.body.data.lastRunError).toMatch(/broke on purpose/);
    expect(platform.running.schedules.nextDue(cronId)).toBeNull();
    // A due time reaching a job in error runs nothing.
    expect(afterDue.body.data).toMatchObject({ consecutiveFailures: 3, lastRunAt: broken.body.data.lastRunAt });
    expect(resumed.body.data).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    expect(resumed.body.data.nextRunAt).toEqual(expect.any(String));
    expect(paused.body.data).toMatchObject({ status: 'paused', nextRunAt: null });
    expect(platform.running.schedules.nextDue(cronId)).toBeNull();
  });

  it('keeps why the last run failed as lastError {at, code, message}, secrets scrubbed, on the job, its list and its usage record', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'cron-last-error', credits: 20 });
    const key = 'sk-cron-secret-value-98765';
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'openai', apiKey: key } });
    const agentId = await createAgent(user, 'cron-leaking', LEAKING);
    const created = await createJob(user, { name: 'leaks', agentId, schedule: 'rate(1 day)', inputMessage: 'go' });
    const cronId = created.body.data.cronId as string;

    // Act
    const run = await platform.api('POST', `/cron/${cronId}/run`, { token: user.token });
    const got = await platform.api('GET', `/cron/${cronId}`, { token: user.token });
    const list = await platform.api('GET', '/cron', { token: user.token });
    const logs = await platform.api('GET', `/logs?resourceId=${cronId}`, { token: user.token });
    const record = await platform.api('GET', `/logs/${run.body.data.requestId}`, { token: user.token });

    // Assess
    expect(created.body.data.lastError).toBeNull();
    expect(run.body.data.status).toBe('error');
    expect(got.body.data.lastError).toEqual({ at: got.body.data.lastRunAt, code: 'AGENT_EXECUTION_FAILED', message: expect.stringMatching(/broke holding/) });
    expect(list.body.data.crons.find((c: { cronId: string }) => c.cronId === cronId).lastError).toEqual(got.body.data.lastError);
    expect(logs.body.data.logs[0]).toMatchObject({ resourceType: 'cron', status: 'error' });
    expect(record.body.data.error).toEqual({ code: 'AGENT_EXECUTION_FAILED', message: got.body.data.lastError.message });
    expect(JSON.stringify([run.body, got.body, list.body, record.body])).not.toContain(key);
  });

  it('stops running once the owner has no active user token, checked at run time', async () => {
    // Prepare: a user with two tokens; the job keeps none
    const user = await createUser(platform, { alias: 'cron-revoked', credits: 10 });
    const agentId = await createAgent(user, 'revoked-echo', ECHO);
    const created = await createJob(user, { name: 'r', agentId, schedule: 'rate(1 hour)', inputMessage: 'hi' });
    const cronId = created.body.data.cronId as string;
    const second = await platform.api('POST', '/user/token/create', { token: user.token, body: { name: 'second' } });
    const secretKeyHeaders = { 'x-svc-userid': user.userId, 'x-svc-secretkey': user.secretKey };

    // Act: revoke one token, run; revoke the other, run (authenticated by the secret key, which is not a user token)
    await platform.api('POST', '/user/token/revoke', { token: user.token, body: { tokenId: user.tokenId } });
    const withOne = await platform.api('POST', `/cron/${cronId}/run`, { headers: secretKeyHeaders });
    await platform.api('POST', '/user/token/revoke', { token: second.body.data.token, body: { tokenId: second.body.data.tokenId } });
    const withNone = await platform.api('POST', `/cron/${cronId}/run`, { headers: secretKeyHeaders });
    const stored = await platform.running.ports.cronJobs.get(cronId);

    // Assess
    expect(second.status).toBe(200);
    expect(withOne.body.data.status).toBe('success');
    expect(withNone.body.data).toMatchObject({ status: 'error', error: expect.stringMatching(/no active user token/) });
    expect(JSON.stringify(stored)).not.toMatch(/svc_/);
  });

  it('shows the run and the chat it caused in /logs, joined by lineage', async () => {
    // Prepare
    const created = await createJob(owner, { name: 'traced', agentId: echoId, schedule: 'rate(1 day)', inputMessage: 'trace me' });
    const cronId = created.body.data.cronId as string;

    // Act
    const run = await platform.api('POST', `/cron/${cronId}/run`, { token: owner.token });
    const requestId = run.body.data.requestId as string;
    const cronLogs = await platform.api('GET', `/logs?resourceId=${cronId}`, { token: owner.token });
    const trace = await platform.api('GET', `/logs/trace/${requestId}`, { token: owner.token });

    // Assess
    expect(cronLogs.body.data.logs[0]).toMatchObject({ requestId, resourceType: 'cron', status: 'success' });
    expect(trace.status).toBe(200);
    expect(trace.body.data.root).toMatchObject({ requestId, resourceId: cronId });
    expect(trace.body.data.root.children).toEqual([expect.objectContaining({ resourceId: echoId, parentRequestId: requestId })]);
  });

  it('keeps serving when a job runs the last time of its year range: it shows as ended, also after a restart', { timeout: 150_000 }, async () => {
    // Prepare: a platform of its own, to restart, whose clock is set back to 50 s into a minute, so
    // the job's one due time (the next minute) comes in about 10 s, and a restart (at the real
    // time, later still) starts after it
    const own = await startTestPlatform();
    const user = await createUser(own, { alias: 'cron-ending', credits: 100 });
    const agent = await own.api('POST', '/agent/create', { token: user.token, body: { agentName: 'ending-echo', description: 'e', sourceCode: ECHO } });
    own.clock.advance(-((own.clock.now() - 50_000 + 60_000) % 60_000));
    const due = new Date(Math.ceil(own.clock.now() / 60_000) * 60_000);
    const schedule = `cron(${due.getUTCMinutes()} ${due.getUTCHours()} ${due.getUTCDate()} ${due.getUTCMonth() + 1} ? ${due.getUTCFullYear()})`;
    const created = await own.api('POST', '/cron', {
      token: user.token,
      body: { name: 'once', agentId: agent.body.data.agentId, schedule, inputMessage: 'last' },
    });
    const other = await own.api('POST', '/cron', { token: user.token, body: { name: 'daily', agentId: agent.body.data.agentId, schedule: 'rate(1 day)' } });
    const cronId = created.body.data.cronId as string;
    let restarted: TestPlatform | undefined;
    try {
      // Act: wait for its due time to run, then read it; restart on the same data and read again
      const ran = await eventually(
        () => own.api('GET', `/cron/${cronId}`, { token: user.token }),
        (res) => res.status !== 200 || res.body.data.lastRunStatus !== null,
        100_000,
      );
      const list = await own.api('GET', '/cron', { token: user.token });
      const health = await own.api('GET', '/health');
      const armed = own.running.schedules.nextDue(cronId);
      await own.running.tasks.idle();
      await own.stop();
      restarted = await startTestPlatform({ dataDir: own.dataDir });
      const afterRestart = await restarted.api('GET', `/cron/${cronId}`, { token: user.token });
      const listAfterRestart = await restarted.api('GET', '/cron', { token: user.token });
      const armedAfterRestart = restarted.running.schedules.nextDue(cronId);
      const resumed = await restarted.api('PUT', `/cron/${cronId}`, { token: user.token, body: { schedule: 'rate(1 hour)' } });

      // Assess: it was made active with its one due time, ran it, and then had ended, while the platform kept serving
      expect(created.body.data).toMatchObject({ status: 'active', nextRunAt: due.toISOString() });
      expect(ran.status).toBe(200);
      expect(ran.body.data).toMatchObject({ status: 'ended', nextRunAt: null, lastRunStatus: 'success' });
      expect(armed).toBeNull();
      expect(health.status).toBe(200);
      expect(list.status).toBe(200);
      const listed = (res: typeof list) => Object.fromEntries(res.body.data.crons.map((c: { cronId: string; status: string }) => [c.cronId, c.status]));
      expect(listed(list)).toEqual({ [cronId]: 'ended', [other.body.data.cronId]: 'active' });
      // Assess: after a restart the owner's job and list still answer, the same
      expect(afterRestart.status).toBe(200);
      expect(afterRestart.body.data).toMatchObject({ status: 'ended', nextRunAt: null, lastRunAt: ran.body.data.lastRunAt });
      expect(listAfterRestart.status).toBe(200);
      expect(listed(listAfterRestart)).toEqual({ [cronId]: 'ended', [other.body.data.cronId]: 'active' });
      expect(armedAfterRestart).toBeNull();
      // Assess: a schedule with runs ahead makes it active again
      expect(resumed.body.data).toMatchObject({ status: 'active', nextRunAt: expect.any(String) });
      expect(restarted.running.schedules.nextDue(cronId)?.toISOString()).toBe(resumed.body.data.nextRunAt);
    } finally {
      await (restarted ?? own).stop({ removeData: true });
    }
  });

  // A real due time of rate(1 minute) on the running platform, then a restart on the same data
  // directory. The platform's clock is set back to 52 s into a minute before the job is made, so the
  // due time comes in about 8 s rather than anywhere up to a minute.
  it(
    'fires a rate(1 minute) job on the running platform, and after a restart neither repeats a due time nor replays missed ones',
    { timeout: 150_000 },
    async () => {
      // Prepare: a platform of its own, to restart, its clock set back to 52 s into a minute (the
      // restart, at the real time, comes after the due time, as a restart after a stop does)
      const own = await startTestPlatform();
      const user = await createUser(own, { alias: 'cron-timer', credits: 100 });
      const agent = await own.api('POST', '/agent/create', { token: user.token, body: { agentName: 'timer-echo', description: 'e', sourceCode: ECHO } });
      own.clock.advance(-((own.clock.now() - 52_000 + 60_000) % 60_000));
      const created = await own.api('POST', '/cron', {
        token: user.token,
        body: { name: 'every minute', agentId: agent.body.data.agentId, schedule: 'rate(1 minute)', inputMessage: 'tick' },
      });
      const cronId = created.body.data.cronId as string;
      const firstDue = created.body.data.nextRunAt as string;
      let restarted: TestPlatform | undefined;
      try {
        // Act: wait for the first due time to run
        const ran = await eventually(
          () => own.api('GET', `/cron/${cronId}`, { token: user.token }),
          (res) => res.body.data.lastRunStatus !== null,
          100_000,
        );
        await own.running.tasks.idle();
        await own.stop();
        restarted = await startTestPlatform({ dataDir: own.dataDir });
        const startedAt = Date.now();
        // The same due time delivered again (a task left pending at the stop, or SQS's second delivery).
        await deliverDueTime(restarted, cronId, firstDue);
        const logs = await restarted.api('GET', `/logs?resourceId=${cronId}`, { token: user.token });
        const after = await restarted.api('GET', `/cron/${cronId}`, { token: user.token });

        // Assess: it ran once, at the due time it announced, as a scheduled run with the chat under it
        expect(ran.body.data).toMatchObject({ lastRunStatus: 'success', consecutiveFailures: 0 });
        const runs = logs.body.data.logs.filter((l: { resourceType: string }) => l.resourceType === 'cron');
        expect(runs).toHaveLength(1);
        const full = await restarted.api('GET', `/logs/${runs[0].requestId}`, { token: user.token });
        expect(JSON.stringify(full.body)).toContain(firstDue);
        // Assess: after the restart the next due time is ahead, not a replay of ones missed while stopped
        expect(Date.parse(after.body.data.nextRunAt)).toBeGreaterThan(startedAt);
        expect(restarted.running.schedules.nextDue(cronId)?.toISOString()).toBe(after.body.data.nextRunAt);
        expect(after.body.data.lastRunAt).toBe(ran.body.data.lastRunAt);
      } finally {
        await (restarted ?? own).stop({ removeData: true });
      }
    },
  );
});
