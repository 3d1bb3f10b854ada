/**
 * The OS boundary on its own: Python code that has already got past every language-level layer
 * (the review found such routes) runs with the real `os` and `socket` modules inside the same
 * sandbox plan the runtime servers use, and tries what the review's attacks did next.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_UID_RANGE,
  parseUidRange,
  prepareOsSandbox,
  SandboxUnavailableError,
  spawnPlan,
  type OsSandbox,
  type SandboxUser,
} from '../../functions/runtimes/os-sandbox.ts';
import { probePython, type PythonInterpreter } from '../../functions/runtimes/python-interpreter.ts';
import { runPlan } from '../support/sandboxed-python.ts';

/** Each attempt prints one JSON line: its name and whether it worked, with what it got. */
const ATTACKS = String.raw`
import json, os, signal, socket, sys
results = {}
def attempt(name, work):
    try:
        results[name] = {"ok": True, "value": str(work())[:300]}
    except BaseException as error:
        results[name] = {"ok": False, "error": type(error).__name__}
platform_pid, platform_port, secret_file, other_socket = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
results["uid"] = os.getuid()
attempt("read_secret_file", lambda: open(secret_file).read())
attempt("list_data_dir", lambda: os.listdir(os.path.dirname(secret_file)))
attempt("parent_environ", lambda: open("/proc/%d/environ" % os.getppid(), "rb").read().decode())
attempt("init_environ", lambda: open("/proc/1/environ", "rb").read().decode())
attempt("signal_platform", lambda: os.kill(platform_pid, 0))
attempt("platform_cmdline", lambda: open("/proc/%d/cmdline" % platform_pid, "rb").read())
attempt("connect_platform", lambda: socket.create_connection(("127.0.0.1", platform_port), timeout=2))
attempt("connect_other_tenant", lambda: socket.socket(socket.AF_UNIX).connect(other_socket))
attempt("write_usr", lambda: open("/usr/owned-by-sandbox", "w").write("x"))
attempt("new_user_namespace", lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, "unshare") else (_ for _ in ()).throw(PermissionError("no os.unshare")))
import resource
results["limits"] = {"nproc": resource.getrlimit(resource.RLIMIT_NPROC), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE), "core": resource.getrlimit(resource.RLIMIT_CORE)}
attempt("raise_open_files", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096)))
results["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(results))
`;

/** A variable of the platform's own environment that must not be readable from inside. */
const SECRET_NAME = 'PLATFORM_SANDBOX_TEST_SECRET';
const SECRET_VALUE = 'platform-env-secret-4711';

interface Attempt {
  ok: boolean;
  value?: string;
  error?: string;
}

function runInSandbox(sandbox: OsSandbox, own: { controlDir: string; user: SandboxUser }, python: PythonInterpreter, args: string[]): Promise<string> {
  return runPlan(
    sandbox.plan(python.executable, ['-c', ATTACKS, ...args], {
      readOnly: python.roots,
      controlDir: own.controlDir,
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      tmpfsBytes: 1024 * 1024,
      user: own.user,
    }),
  );
}

describe('the OS sandbox holds when the language layers have fallen', () => {
  let dataDir: string;
  let secretFile: string;
  let listener: net.Server;
  let port: number;
  let sandbox: OsSandbox;
  let otherTenantDir: string;

  beforeAll(async () => {
    process.env[SECRET_NAME] = SECRET_VALUE;
    // Prepare: a platform secret on disk, a platform port on loopback, another tenant's socket.
    dataDir = await mkdtemp(join(tmpdir(), 'sandbox-data-'));
    secretFile = join(dataDir, 'admin-token');
    await writeFile(secretFile, 'svc_ut_secret-the-sandbox-must-not-read\n', { mode: 0o600 });
    listener = net.createServer((socket) => socket.end('platform'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
    sandbox = await prepareOsSandbox();
    otherTenantDir = (await sandbox.makeControlDir(sandbox.user('other-tenant'))).hostPath;
  });
  afterAll(async () => {
    delete process.env[SECRET_NAME];
    await new Promise((resolve) => listener.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
    await rm(otherTenantDir, { recursive: true, force: true });
  });

  it("keeps the platform's files, processes, port and other tenants out of reach", async () => {
    // Prepare
    const python = await probePython('python3');
    const user = sandbox.user('tenant-a');
    const own = await sandbox.makeControlDir(user);

    // Act
    const out = await runInSandbox(sandbox, { controlDir: own.hostPath, user }, python, [
      String(process.pid),
      String(port),
      secretFile,
      join(otherTenantDir, 'runtime.sock'),
    ]).finally(async () => {
      await own.remove();
      user.release();
    });
    const results = JSON.parse(out) as Record<string, Attempt> & { uid: number; processes: number[]; limits: Record<string, [number, number]> };

    // Assess
    for (const name of [
      'read_secret_file',
      'list_data_dir',
      'signal_platform',
      'platform_cmdline',
      'connect_platform',
      'connect_other_tenant',
      'write_usr',
      'new_user_namespace',
      'raise_open_files',
    ]) {
      expect({ name, ...results[name] }).toMatchObject({ name, ok: false });
    }
    expect(out).not.toContain('svc_ut_secret');
    // The sandbox's own parent and init are bubblewrap, started with an empty environment.
    expect(out).not.toContain(SECRET_VALUE);
    expect(results.parent_environ?.value ?? '').not.toContain('PATH=');
    // Its own pid namespace: a handful of processes, none of them the platform.
    expect(results.processes.length).toBeLessThan(5);
    // Limits set before the sandbox starts, hard as well as soft so user code cannot raise them.
    expect(results.limits).toMatchObject({ nofile: [1024, 1024], core: [0, 0] });
    if (process.getuid?.() === 0) {
      expect(results.uid).toBe(user.uid);
      expect(results.uid).toBeGreaterThanOrEqual(DEFAULT_UID_RANGE.first);
      expect(results.uid).toBeLessThanOrEqual(DEFAULT_UID_RANGE.last);
      expect(results.limits['nproc']).toEqual([1024, 1024]);
    }
  });

  it("shows code that lives under the host's /tmp above the sandbox's private /tmp", async () => {
    // Prepare: a checkout under /tmp, as CI clones can be
    const python = await probePython('python3');
    const code = await mkdtemp(join(tmpdir(), 'sandbox-code-'));
    await chmod(code, 0o755);
    await writeFile(join(code, 'hello.py'), 'print("hello from " + __file__)\n', { mode: 0o644 });
    const user = sandbox.user('tenant-a');
    const own = await sandbox.makeControlDir(user);

    // Act
    const plan = sandbox.plan(python.executable, ['hello.py'], {
      readOnly: [...python.roots, code],
      controlDir: own.hostPath,
      cwd: code,
      env: { PATH: '/usr/bin:/bin' },
      tmpfsBytes: 1024 * 1024,
      user,
    });
    const out = await runPlan(plan).finally(async () => {
      await own.remove();
      user.release();
      await rm(code, { recursive: true, force: true });
    });

    // Assess
    expect(out.trim()).toBe(`hello from ${join(code, 'hello.py')}`);
  });

  it('refuses to run user code when bubblewrap is missing, and says how to fix it', async () => {
    // Act
    const refused = await prepareOsSandbox({ bwrap: 'bwrap-that-does-not-exist' }).catch((error: unknown) => error);

    // Assess
    expect(refused).toBeInstanceOf(SandboxUnavailableError);
    expect((refused as Error).message).toMatch(/apt-get install bubblewrap.*UNSAFE_USER_CODE=allow/);
  });
});

/** A small program that starts threads until the kernel refuses one, then prints how many it got. */
const THREAD_HOARDER = String.raw`
import sys, threading, time
started = 0
try:
    while started < 100000:
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        started += 1
except RuntimeError:
    pass
print(started, flush=True)
sys.stdin.read()
`;

describe.skipIf(process.getuid?.() !== 0)('the OS sandbox gives each tenant its own uid and process limit (as root)', () => {
  const LIMIT = 64;
  let sandbox: OsSandbox;

  beforeAll(async () => {
    sandbox = await prepareOsSandbox({ maxProcesses: LIMIT });
  });

  it('gives one tenant one uid across its sandboxes, and every other tenant and spare another', () => {
    // Act
    const first = sandbox.user('tenant-a');
    const again = sandbox.user('tenant-a');
    const other = sandbox.user('tenant-b');
    const spares = [sandbox.user(null), sandbox.user(null)];
    const uids = [first, other, ...spares].map((user) => user.uid);
    for (const user of [first, again, other, ...spares]) user.release();

    // Assess
    expect(again.uid).toBe(first.uid);
    expect(new Set(uids).size).toBe(uids.length);
    for (const uid of uids) expect(uid).toBeGreaterThanOrEqual(DEFAULT_UID_RANGE.first);
  });

  it("keeps a tenant's uid while any of its sandboxes holds it, and never hands one uid to two tenants", async () => {
    // Prepare: a range of two ids, so that every tenant collides with another
    const small = await prepareOsSandbox({ uidRange: { first: DEFAULT_UID_RANGE.first, last: DEFAULT_UID_RANGE.first + 1 } });
    const a = small.user('tenant-a');
    const b = small.user('tenant-b');

    // Act
    const third = (() => {
      try {
        return small.user('tenant-c');
      } catch (error) {
        return error;
      }
    })();
    a.release();
    const afterRelease = small.user('tenant-c');

    // Assess
    expect(a.uid).not.toBe(b.uid);
    expect(third).toBeInstanceOf(SandboxUnavailableError);
    expect((third as Error).message).toMatch(/SANDBOX_UID_RANGE/);
    expect(afterRelease.uid).toBe(a.uid);
    b.release();
    afterRelease.release();
  });

  it("refuses a range that holds ids this machine uses, and SANDBOX_UID_RANGE's mistakes", async () => {
    // Act
    const refused = await prepareOsSandbox({ uidRange: { first: 0, last: 10 } }).catch((error: unknown) => error);

    // Assess: root and the system users own ids there
    expect(refused).toBeInstanceOf(SandboxUnavailableError);
    expect((refused as Error).message).toMatch(/root \(0\) in \/etc\/passwd/);
    expect(parseUidRange('100000-165535')).toEqual({ first: 100000, last: 165535 });
    expect(parseUidRange('165535-100000')).toMatch(/first/);
    expect(parseUidRange('0-10')).toMatch(/between 1/);
    expect(parseUidRange('100000')).toMatch(/FIRST-LAST/);
  });

  it("leaves another tenant's sandbox free to start threads while one tenant holds all it may", async () => {
    // Prepare
    const python = await probePython('python3');
    const start = async (tenantId: string) => {
      const user = sandbox.user(tenantId);
      const own = await sandbox.makeControlDir(user);
      const child = spawnPlan(
        sandbox.plan(python.executable, ['-c', THREAD_HOARDER], {
          readOnly: python.roots,
          controlDir: own.hostPath,
          cwd: '/',
          env: { PATH: '/usr/bin:/bin' },
          tmpfsBytes: 1024 * 1024,
          user,
        }),
        [],
      );
      const count = new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (out.includes('\n')) resolve(Number(out.trim()));
        });
        child.once('close', (code) => reject(new Error(`exited ${code} before it counted`)));
      });
      const stop = async () => {
        child.stdin!.end();
        await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('close', resolve)));
        await own.remove();
        user.release();
      };
      return { count, stop };
    };

    // Act: the attacker holds every thread its uid may have; then the bystander starts.
    const attacker = await start('attacker');
    const held = await attacker.count;
    const bystander = await start('bystander');
    const bystanderHeld = await bystander.count.finally(() => Promise.all([attacker.stop(), bystander.stop()]));

    // Assess: each got nearly its whole limit (bubblewrap and the interpreter take a few).
    expect(held).toBeGreaterThan(LIMIT - 8);
    expect(held).toBeLessThan(LIMIT);
    expect(bystanderHeld).toBeGreaterThan(LIMIT - 8);
  });
});
