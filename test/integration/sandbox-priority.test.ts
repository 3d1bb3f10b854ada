/**
 * User code's CPU priority (os-sandbox.ts, SANDBOX_NICE): sandboxed processes run below the
 * platform, in their task and in their session's autogroup, and code that has got past every
 * language-level layer (the real `os` module, as os-sandbox.test.ts runs it) cannot raise either.
 * The platform's own processes, the stores' among them, keep the platform's priority.
 */
import { existsSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_NICE, prepareOsSandbox, type OsSandbox } from '../../functions/runtimes/os-sandbox.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { descendantProcesses } from '../support/processes.ts';
import { probePython } from '../../functions/runtimes/python-interpreter.ts';
import { runPlan } from '../support/sandboxed-python.ts';

/** Each attempt to take the priority back prints whether it worked; then what the process ends up with. */
const RAISE_PRIORITY = String.raw`
import json, os
results = {}
def attempt(name, work):
    try:
        work()
        results[name] = {"ok": True}
    except BaseException as error:
        results[name] = {"ok": False, "error": type(error).__name__}
def in_child(work):
    # A fork's attempt, so that a process group leader's own limits are not what is tested.
    pid = os.fork()
    if pid == 0:
        try:
            work()
            os._exit(0)
        except BaseException:
            os._exit(1)
    if os.waitpid(pid, 0)[1] != 0:
        raise PermissionError("refused in the child")
attempt("nice_minus_5", lambda: os.nice(-5))
attempt("setpriority_0", lambda: os.setpriority(os.PRIO_PROCESS, 0, 0))
attempt("write_autogroup", lambda: open("/proc/self/autogroup", "w").write("0"))
attempt("setsid", lambda: in_child(os.setsid))
attempt("real_time", lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)))
results["priority"] = os.getpriority(os.PRIO_PROCESS, 0)
results["stat_nice"] = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[16])
results["autogroup"] = open("/proc/self/autogroup").read().strip() if os.path.exists("/proc/self/autogroup") else None
print(json.dumps(results))
`;

/** The kernel puts each session in an autogroup of its own (with CONFIG_SCHED_AUTOGROUP). */
const AUTOGROUPS = existsSync('/proc/self/autogroup');

/** The nice value the kernel reports for `pid` (field 19 of /proc/PID/stat). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The nice value of `pid`'s session's autogroup, e.g. 10 from "/autogroup-42 nice 10". */
function autogroupNiceOf(pid: number): number {
  return Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1]);
}

/** Runs RAISE_PRIORITY in `sandbox` to its end and parses what it printed. */
async function raiseFromInside(
  sandbox: OsSandbox,
): Promise<Record<string, { ok: boolean }> & { priority: number; stat_nice: number; autogroup: string | null }> {
  const python = await probePython('python3');
  const user = sandbox.user('tenant-priority');
  const own = await sandbox.makeControlDir(user);
  const plan = sandbox.plan(python.executable, ['-c', RAISE_PRIORITY], {
    readOnly: python.roots,
    controlDir: own.hostPath,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    tmpfsBytes: 1024 * 1024,
    user,
  });
  const out = await runPlan(plan).finally(async () => {
    await own.remove();
    user.release();
  });
  return JSON.parse(out) as Awaited<ReturnType<typeof raiseFromInside>>;
}

describe('user code runs below the platform on the CPU, and cannot climb back', () => {
  it('starts sandboxes SANDBOX_NICE steps below the platform, in the task and its session, and refuses every way back', async () => {
    // Prepare
    const sandbox = await prepareOsSandbox();
    const expected = Math.min(19, getPriority() + DEFAULT_SANDBOX_NICE);

    // Act
    const results = await raiseFromInside(sandbox);

    // Assess
    expect(results.priority).toBe(expected);
    expect(results.stat_nice).toBe(expected);
    if (AUTOGROUPS) expect(results.autogroup).toMatch(new RegExp(`nice ${DEFAULT_SANDBOX_NICE}$`));
    for (const name of ['nice_minus_5', 'setpriority_0', 'write_autogroup', 'setsid', 'real_time']) {
      expect({ name, ...results[name] }).toMatchObject({ name, ok: false });
    }
  });

  it("leaves user code at the platform's priority with SANDBOX_NICE=0", async () => {
    // Prepare
    const sandbox = await prepareOsSandbox({ nice: 0 });

    // Act
    const results = await raiseFromInside(sandbox);

    // Assess
    expect(results.priority).toBe(getPriority());
    expect(sandbox.description).toContain('SANDBOX_NICE=0');
  });
});

describe("the platform's runtimes run below it, its stores at its own priority", () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it("runs a tenant's action in a runtime SANDBOX_NICE steps below the platform, and the stores' process at the platform's", async () => {
    // Prepare: a tenant whose action has run once, so that its runtime is up
    const user = await createUser(platform, { alias: 'nicetenant', credits: 100 });
    const created = await platform.api('POST', '/action/create', {
      token: user.token,
      body: {
        actionName: 'Echo',
        description: 'for tests',
        runtime: 'python3.12',
        sourceCode: 'def handler(event, context):\n    return {"statusCode": 200, "body": {"ok": True}}\n',
        category: 'testing',
        status: 'active',
      },
    });
    expect(created.status).toBe(200);
    const ran = await platform.api('GET', `/action/${created.body.data.actionId}`, { token: user.token });
    expect(ran.status).toBe(200);

    // Act: the processes this file's platform started
    const runtimes = descendantProcesses(
      ([program, ...args]) => program !== undefined && !program.endsWith('bwrap') && args.includes('platform_runtime.server'),
    );
    const stores = descendantProcesses((args) => args.some((arg) => arg.includes('stores-process')));

    // Assess
    const platformNice = getPriority();
    expect(runtimes.length).toBeGreaterThan(0);
    expect(stores.length).toBeGreaterThan(0);
    for (const pid of runtimes) {
      expect(niceOf(pid)).toBe(Math.min(19, platformNice + DEFAULT_SANDBOX_NICE));
      if (AUTOGROUPS) expect(autogroupNiceOf(pid)).toBe(DEFAULT_SANDBOX_NICE);
    }
    for (const pid of stores) expect(niceOf(pid)).toBe(platformNice);
  });
});
