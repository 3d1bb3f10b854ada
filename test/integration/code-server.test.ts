/**
 * Code servers (SPEC 4.12, issue 36) over HTTP on the real local platform, its EC2 and SSM backend
 * pointed at the moto server with the real AWS SDK: the state machine with every error, the plan
 * gate, the credit floor, billing ticks on the test clock (charges, auto-stop with its record, no
 * double charge), setup's environment handed over out of band (in the SecureString moto holds,
 * never in the command text, an answer or a log), password and url only while running, and
 * another user seeing nothing. A platform without a backend answers 503 except the catalogue.
 */
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetParameterCommand, GetParametersByPathCommand, ListCommandsCommand, SSMClient } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the code server test against EC2 and SSM is skipped (python3 -m pip install "moto[server]")');

const SECRET_PAT = 'ghp_Sup3rSecretPersonalAccessToken0123';
const SECRET_AWS_ID = 'AKIAEXAMPLESECRET777';
const SECRET_AWS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzSECRET';
const FIVE_MINUTES = 5 * 60_000;

describe('code servers without a machine backend', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('answers 503 CODE_SERVER_UNAVAILABLE saying what to configure, except the catalogue', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'nobackend', credits: 1000 });

    // Act
    const types = await platform.api('GET', '/code-server/instance-types', { token: user.token });
    const status = await platform.api('GET', '/code-server/status', { token: user.token });
    const launched = await platform.api('POST', '/code-server/launch', { token: user.token, body: {} });

    // Assess
    expect(types.status, types.text).toBe(200);
    expect(types.body.data.default).toBe('t3.small');
    expect(types.body.data.instanceTypes.map((t: { instanceType: string; creditsPerMinute: number }) => [t.instanceType, t.creditsPerMinute])).toEqual([
      ['t3.small', 2],
      ['t3.medium', 3],
      ['t3.large', 5],
      ['t3.xlarge', 10],
    ]);
    for (const res of [status, launched]) {
      expect(res.status, res.text).toBe(503);
      expect(res.text).toContain('CODE_SERVER_UNAVAILABLE');
      expect(res.text).toContain('CODE_SERVER_BACKEND=ec2');
    }
  });
});

describe.skipIf(!hasMoto)('code servers on EC2 and SSM (moto, real AWS SDK)', () => {
  let moto: MotoServer;
  let platform: TestPlatform;
  let ec2: EC2Client;
  let ssm: SSMClient;
  const logLines: string[] = [];
  const saved = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'] };

  beforeAll(async () => {
    moto = await startMoto();
    // The SDK's credential chain reads these (moto takes any); the endpoints go through the platform's settings.
    process.env['AWS_ACCESS_KEY_ID'] = 'testing';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'testing';
    platform = await startTestPlatform({
      logLines,
      env: { CODE_SERVER_BACKEND: 'ec2', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_EC2: moto.endpoint, AWS_ENDPOINT_URL_SSM: moto.endpoint },
    });
    ec2 = new EC2Client(motoClientConfig(moto.endpoint));
    ssm = new SSMClient(motoClientConfig(moto.endpoint));
  }, 60_000);
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    ec2?.destroy();
    ssm?.destroy();
    await moto?.stop();
    if (saved.id === undefined) delete process.env['AWS_ACCESS_KEY_ID'];
    else process.env['AWS_ACCESS_KEY_ID'] = saved.id;
    if (saved.secret === undefined) delete process.env['AWS_SECRET_ACCESS_KEY'];
    else process.env['AWS_SECRET_ACCESS_KEY'] = saved.secret;
  });

  async function subscriber(alias: string, credits: number, tier = 'starter') {
    const user = await createUser(platform, { alias, credits, email: `${alias}@example.com` });
    const set = await platform.api('POST', `/admin/users/${user.userId}/tier`, { token: platform.adminToken, body: { tier } });
    expect(set.status, set.text).toBe(200);
    return user;
  }
  const balance = async (token: string) => (await platform.api('GET', '/user/info', { token })).body.data.credits as number;
  const status = (token: string) => platform.api('GET', '/code-server/status', { token });
  const post = (token: string, op: string, body: unknown = {}) => platform.api('POST', `/code-server/${op}`, { token, body });
  const tick = () => platform.api('POST', '/admin/code-server/billing-tick', { token: platform.adminToken, body: {} });
  const billingRecords = async (token: string, instanceId: string) => {
    const logs = await platform.api('GET', `/logs?resourceId=${instanceId}&pageSize=50`, { token });
    expect(logs.status, logs.text).toBe(200);
    const items = (logs.body.data.logs ?? logs.body.data.items ?? logs.body.data) as { requestType: string; creditsUsed: number; response: unknown }[];
    return items.filter((r) => r.requestType === 'CODE_SERVER_BILLING');
  };
  const ec2State = async (instanceId: string) =>
    (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0]?.State?.Name;

  it('refuses without a starter or professional plan (403 saying so), and anonymous callers (401)', async () => {
    // Prepare
    const free = await subscriber('freeplan', 1000, 'free');

    // Act
    const launched = await post(free.token, 'launch');
    const anonymous = await platform.api('GET', '/code-server/status');

    // Assess
    expect(launched.status, launched.text).toBe(403);
    expect(launched.text).toMatch(/starter or professional/);
    expect(anonymous.status).toBe(401);
  });

  it('walks the state machine with every error, url and password only while running, keys as prefixes only', async () => {
    // Prepare
    const user = await subscriber('coder', 1000);
    for (const [serviceName, apiKey] of [
      ['github_pat', SECRET_PAT],
      ['aws_access_key_id', SECRET_AWS_ID],
      ['aws_secret_access_key', SECRET_AWS_KEY],
    ] as const) {
      const stored = await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName, apiKey } });
      expect(stored.status, stored.text).toBeLessThan(300);
    }

    // Act and assess, step by step
    const none = await status(user.token);
    expect(none.status, none.text).toBe(200);
    expect(none.body.data.status).toBe('none');
    expect((await post(user.token, 'start')).status).toBe(404);
    expect((await post(user.token, 'stop')).status).toBe(404);
    expect((await post(user.token, 'terminate')).status).toBe(404);
    expect((await post(user.token, 'setup', { setupScript: 'echo hi' })).status).toBe(404);

    const badType = await post(user.token, 'launch', { instanceType: 'm5.24xlarge' });
    expect(badType.status, badType.text).toBe(400);
    expect(badType.text).toContain('INVALID_INSTANCE_TYPE');
    const tooLong = await post(user.token, 'launch', { setupScript: 'x'.repeat(8001) });
    expect(tooLong.status, tooLong.text).toBe(400);

    const launched = await post(user.token, 'launch', { instanceType: 't3.medium', setupScript: 'echo saved' });
    expect(launched.status, launched.text).toBe(200);
    expect(launched.body.data).toMatchObject({ status: 'launching', instanceType: 't3.medium', creditsPerMinute: 3, alias: 'coder' });
    const instanceId = launched.body.data.instanceId as string;
    expect(await ec2State(instanceId)).toBeDefined();
    const again = await post(user.token, 'launch');
    expect(again.status, again.text).toBe(409);

    const running = await status(user.token);
    expect(running.body.data).toMatchObject({ status: 'running', instanceId, instanceType: 't3.medium', setupScript: 'echo saved' });
    expect(running.body.data.url).toMatch(/^https:\/\//);
    expect(running.body.data.password).toEqual(expect.any(String));
    expect(running.body.data.password.length).toBeGreaterThanOrEqual(20);
    expect(running.body.data.credentials).toEqual({ hasGithubPat: true, githubPatPrefix: 'ghp_...', hasAwsKeys: true, awsAccessKeyPrefix: 'AKIA...' });
    expect(running.text).not.toContain(SECRET_PAT);
    expect(running.text).not.toContain(SECRET_AWS_ID);
    expect(running.text).not.toContain(SECRET_AWS_KEY);

    const startWhileRunning = await post(user.token, 'start');
    expect(startWhileRunning.status).toBe(409);
    const stopped = await post(user.token, 'stop');
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.data).toMatchObject({ status: 'stopped', instanceId });
    expect(await ec2State(instanceId)).toBe('stopped');
    const stoppedView = await status(user.token);
    expect(stoppedView.body.data.status).toBe('stopped');
    expect(stoppedView.body.data).not.toHaveProperty('url');
    expect(stoppedView.body.data).not.toHaveProperty('password');
    const stopAgain = await post(user.token, 'stop');
    expect(stopAgain.status).toBe(409);
    expect(stopAgain.text).toContain('INSTANCE_STOPPED');
    const setupWhileStopped = await post(user.token, 'setup');
    expect(setupWhileStopped.status).toBe(409);
    expect(setupWhileStopped.text).toContain('INSTANCE_STOPPED');
    expect((await post(user.token, 'launch')).status).toBe(409);

    const started = await post(user.token, 'start');
    expect(started.status, started.text).toBe(200);
    expect(started.body.data).toMatchObject({ status: 'launching', instanceId });
    expect((await status(user.token)).body.data.status).toBe('running');

    const terminated = await post(user.token, 'terminate');
    expect(terminated.status, terminated.text).toBe(200);
    expect(terminated.body.data.status).toBe('terminated');
    expect(await ec2State(instanceId)).toBe('terminated');
    const gone = await status(user.token);
    expect(gone.body.data.status).toBe('terminated');
    expect(gone.body.data).not.toHaveProperty('password');
    expect((await post(user.token, 'stop')).status).toBe(404);
    const relaunched = await post(user.token, 'launch');
    expect(relaunched.status, relaunched.text).toBe(200);
    expect(relaunched.body.data.instanceId).not.toBe(instanceId);
    const newPassword = (await status(user.token)).body.data.password;
    expect(newPassword).not.toBe(running.body.data.password);
    await post(user.token, 'terminate');
  });

  it('launches and starts only with credits for 10 minutes at the rate (402)', async () => {
    // Prepare: 29 credits pay 14.5 minutes of t3.small but not 10 of t3.medium (30)
    const user = await subscriber('floor', 29);

    // Act
    const medium = await post(user.token, 'launch', { instanceType: 't3.medium' });
    const small = await post(user.token, 'launch', { instanceType: 't3.small' });

    // Assess
    expect(medium.status, medium.text).toBe(402);
    expect(medium.text).toContain('INSUFFICIENT_CREDITS');
    expect(small.status, small.text).toBe(200);
    await post(user.token, 'terminate');
  });

  it('runs setup with the environment out of band: in the SecureString moto holds, never in the command, an answer or a log', async () => {
    // Prepare
    const user = await subscriber('setupper', 1000);
    for (const [serviceName, apiKey] of [
      ['github_pat', SECRET_PAT],
      ['aws_access_key_id', SECRET_AWS_ID],
      ['aws_secret_access_key', SECRET_AWS_KEY],
    ] as const)
      await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName, apiKey } });
    const launched = await post(user.token, 'launch', {});
    const instanceId = launched.body.data.instanceId as string;
    expect((await status(user.token)).body.data.status).toBe('running');
    const saved = await post(user.token, 'save-setup-script', { setupScript: 'git clone https://x:$GITHUB_PAT@github.com/me/repo' });
    expect(saved.status, saved.text).toBe(200);
    expect((await post(user.token, 'save-setup-script', {})).status).toBe(400);

    // Act
    const run = await post(user.token, 'setup', {});
    const parameters = await ssm.send(new GetParametersByPathCommand({ Path: `/code-server/setup/${instanceId}`, Recursive: true, WithDecryption: true }));
    const commands = await ssm.send(new ListCommandsCommand({ CommandId: run.body.data.commandId }));
    const afterRun = await status(user.token);

    // Assess
    expect(run.status, run.text).toBe(200);
    expect(run.body.data).toMatchObject({ setupStatus: 'running', commandId: expect.any(String) });
    const environment = parameters.Parameters?.[0];
    expect(environment?.Type).toBe('SecureString');
    expect(environment?.Value).toContain(`export GITHUB_PAT='${SECRET_PAT}'`);
    expect(environment?.Value).toContain(`export AWS_ACCESS_KEY_ID='${SECRET_AWS_ID}'`);
    expect(environment?.Value).toContain(`export AWS_SECRET_ACCESS_KEY='${SECRET_AWS_KEY}'`);
    expect(environment?.Value).toContain("export AWS_REGION='us-east-1'");
    expect(environment?.Value).toContain("export USER_ALIAS='setupper'");
    expect(environment?.Value).toContain("export USER_EMAIL='setupper@example.com'");
    const sent = JSON.stringify(commands.Commands?.[0]);
    expect(commands.Commands?.[0]?.DocumentName).toBe('AWS-RunShellScript');
    expect(sent).toContain(environment?.Name);
    for (const secret of [SECRET_PAT, SECRET_AWS_ID, SECRET_AWS_KEY, 'setupper@example.com']) {
      expect(sent).not.toContain(secret);
      expect(run.text).not.toContain(secret);
      expect(afterRun.text).not.toContain(secret);
      expect(logLines.join('\n')).not.toContain(secret);
    }
    expect(afterRun.body.data.setupStatus).toBe('completed');
    const left = await ssm.send(new GetParametersByPathCommand({ Path: `/code-server/setup/${instanceId}`, Recursive: true }));
    expect(left.Parameters ?? []).toEqual([]);
    const environmentRead = await ssm.send(new GetParameterCommand({ Name: environment!.Name!, WithDecryption: true })).catch((error: Error) => error);
    expect(environmentRead).toBeInstanceOf(Error);
    await post(user.token, 'terminate');
  });

  it('charges each 5-minute period once through a CODE_SERVER_BILLING record, and stops when the next cannot be paid', async () => {
    // Prepare: t3.large (5 a minute) with 80 credits (the floor is 50), launched just after a
    // period starts, so the first tick bills its 4 whole minutes (the started one goes to the next)
    const user = await subscriber('biller', 80);
    platform.clock.alignToWindow(FIVE_MINUTES);
    const launched = await post(user.token, 'launch', { instanceType: 't3.large' });
    const instanceId = launched.body.data.instanceId as string;
    await status(user.token);
    const before = await balance(user.token);

    // Act: a period, the same period again, the next (35 left pays another 25), then one after
    // which 10 cannot pay the next 25, then another tick
    platform.clock.advance(FIVE_MINUTES);
    const first = await tick();
    const repeated = await tick();
    const afterFirst = await balance(user.token);
    platform.clock.advance(FIVE_MINUTES);
    const second = await tick();
    platform.clock.advance(FIVE_MINUTES);
    const third = await tick();
    const afterThird = await balance(user.token);
    const view = await status(user.token);
    platform.clock.advance(FIVE_MINUTES);
    const fourth = await tick();
    const afterStop = await balance(user.token);

    // Assess
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual({ charged: 1, stopped: 0, credits: 20 });
    expect(repeated.body.data).toEqual({ charged: 0, stopped: 0, credits: 0 });
    expect(before - afterFirst).toBe(20);
    expect(second.body.data).toEqual({ charged: 1, stopped: 0, credits: 25 });
    expect(third.body.data).toEqual({ charged: 1, stopped: 1, credits: 25 });
    expect(afterThird).toBe(10);
    expect(fourth.body.data).toEqual({ charged: 0, stopped: 0, credits: 0 });
    expect(afterStop).toBe(10);
    expect(view.body.data).toMatchObject({ status: 'stopped', totalMinutesUsed: 14, currentMonthMinutes: 14 });
    expect(view.body.data).not.toHaveProperty('url');
    expect(view.body.data).not.toHaveProperty('password');
    expect(await ec2State(instanceId)).toBe('stopped');
    const records = await billingRecords(user.token, instanceId);
    expect(records.map((r) => r.creditsUsed).sort()).toEqual([20, 25, 25]);
    const responses = records.map((r) => JSON.parse((r.response as { preview: string }).preview) as { autoStopped: boolean });
    expect(responses.filter((r) => r.autoStopped)).toHaveLength(1);
    const restart = await post(user.token, 'start');
    expect(restart.status, restart.text).toBe(402);
  });

  it('charges from the scheduled tick too (the local scheduler running the billing-tick schedule)', async () => {
    // Prepare
    const user = await subscriber('scheduled', 1000);
    platform.clock.alignToWindow(FIVE_MINUTES);
    const launched = await post(user.token, 'launch', { instanceType: 't3.small' });
    await status(user.token);
    const before = await balance(user.token);

    // Act
    platform.clock.advance(2 * FIVE_MINUTES);
    const outcome = await platform.running.scheduler.trigger('code-server.billing-tick');
    const after = await balance(user.token);

    // Assess: 9 whole minutes at 2 credits (the minute started before the period's end goes to the next)
    expect(outcome).toBe('succeeded');
    expect(before - after).toBe(18);
    expect((await billingRecords(user.token, launched.body.data.instanceId as string)).map((r) => r.creditsUsed)).toEqual([18]);
    await post(user.token, 'terminate');
  });

  it('lets another user see and touch nothing of yours', async () => {
    // Prepare
    const owner = await subscriber('owner1', 1000);
    const other = await subscriber('other1', 1000);
    const launched = await post(owner.token, 'launch', {});
    await status(owner.token);

    // Act
    const seen = await status(other.token);
    const stopped = await post(other.token, 'stop');
    const setup = await post(other.token, 'setup', { setupScript: 'echo' });

    // Assess
    expect(seen.body.data.status).toBe('none');
    expect(seen.text).not.toContain(launched.body.data.instanceId);
    expect(stopped.status).toBe(404);
    expect(setup.status).toBe(404);
    expect((await status(owner.token)).body.data.status).toBe('running');
    await post(owner.token, 'terminate');
  });
});
