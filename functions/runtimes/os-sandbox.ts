/**
 * The operating-system boundary around local user code. Every tenant's Python runtime server and
 * MCP host runs inside bubblewrap (`bwrap`, Debian's `bubblewrap` package):
 *
 * - its own user, pid, ipc, mount, network, uts and cgroup namespaces, with no capabilities and no
 *   further user namespaces: it sees no other process, has no network at all (only its own empty
 *   loopback), and cannot signal or trace anything outside;
 * - when the platform runs as root, a uid of the tenant's own from `SANDBOX_UID_RANGE` (see
 *   `SandboxUser`): even a kernel-level escape lands unprivileged, and the kernel counts each
 *   tenant's processes and threads against its own RLIMIT_NPROC, so one tenant at its limit
 *   leaves every other tenant's runs untouched (one shared uid let one run starve them all);
 * - a read-only filesystem of exactly what it needs (/usr, the interpreter, the runtime's code,
 *   TLS certificates) and a private, size-limited tmpfs: no DATA_DIR, no platform secrets, no
 *   other tenant's files;
 * - one writable directory, `/run/svc`, shared with the platform: the process's control socket
 *   and the platform's egress proxy socket live there (see egress-proxy.ts);
 * - a lower CPU priority than the platform (`SANDBOX_NICE`, see `SandboxPriority`), so that user
 *   code saturating the cores does not delay the platform's own request loop.
 *
 * The runtime's own layers (static checker, seccomp, audit hooks, Node's permission model) stay
 * as a second line. Without a working bubblewrap the platform refuses to run user code, unless
 * the operator sets `UNSAFE_USER_CODE=allow`, which is logged loudly at every start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chown, lstat, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { Logger } from '../core/logger.ts';

/** Where the platform-shared directory appears inside a sandbox. */
export const SANDBOX_CONTROL_DIR = '/run/svc';

/** What one sandboxed process needs besides the base system. */
export interface SandboxSpec {
  /** Host paths bound read-only at the same path inside (the interpreter, the runtime's code). */
  readonly readOnly: readonly string[];
  /** The host directory bound read-write at `/run/svc` (made by `makeControlDir`). */
  readonly controlDir: string;
  /** Working directory (a path that is bound). */
  readonly cwd: string;
  /** The process's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Size of the private /tmp. */
  readonly tmpfsBytes: number;
  /** Who it runs as (from `OsSandbox.user`). */
  readonly user: SandboxUser;
}

/**
 * The user one or more sandboxes run as. As root, a uid (and the gid of the same number) of
 * `SANDBOX_UID_RANGE` that serves one owner while any of its sandboxes lives: the kernel's
 * RLIMIT_NPROC counts processes and threads per uid across the whole machine, so a uid per tenant
 * is what makes the limit per tenant. Without root there is no uid to give: the sandbox runs as the
 * platform's own uid, in its namespaces only, and no process limit is set.
 */
export interface SandboxUser {
  readonly uid?: number;
  readonly gid?: number;
  /**
   * Gives the uid back. Call it once the sandbox's processes are gone: the next owner of the uid
   * would otherwise inherit their count. Later calls do nothing.
   */
  release(): void;
}

/** An inclusive range of uids (also used as gids) that sandboxes run as when the platform is root. */
export interface UidRange {
  readonly first: number;
  readonly last: number;
}

/**
 * The default `SANDBOX_UID_RANGE`: 65,536 ids that no convention hands out. useradd gives
 * subordinate ids (rootless containers) from 100000 up to 600165535, systemd-nspawn picks from
 * 524288-1879048191, systemd's own ranges lie below 65536 and from 2147352576 up, and ids from
 * 2^31 up trouble some tools; this range starts right after nspawn's.
 */
export const DEFAULT_UID_RANGE: UidRange = { first: 1_879_048_192, last: 1_879_113_727 };

/** How to spawn a command so that it runs inside the sandbox. */
export interface SpawnPlan {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** Set when the platform runs as root: the sandbox starts as this unprivileged user. */
  readonly uid?: number;
  readonly gid?: number;
  /** Read by the process on fd 3 at its start (bubblewrap's `--seccomp 3`): its seccomp filter. */
  readonly seccompFilter?: Buffer;
  /** The nice value of the process's session's autogroup, set by `spawnPlan` (see `SandboxPriority`). */
  readonly autogroupNice?: number;
}

/** A directory shared by the platform and one sandbox, for their sockets. */
export interface ControlDir {
  /** The directory on the host. */
  readonly hostPath: string;
  /** A path inside the directory as the sandboxed process names it. */
  inside(name: string): string;
  /** The same file as the platform names it. */
  onHost(name: string): string;
  remove(): Promise<void>;
}

export interface OsSandbox {
  /** `bubblewrap`, or `unsafe` when the operator allowed user code without an OS boundary. */
  readonly kind: 'bubblewrap' | 'unsafe';
  /** One line for logs and `/health`-like reports. */
  readonly description: string;
  /**
   * The user the sandboxes of `tenantId` run as: its runtime, MCP host and voice sessions share
   * it, so they share one process limit. `null` asks for a uid of its own, for a process started
   * before any tenant owns it (a spare), which keeps that uid, and its own limit, for its whole life.
   */
  user(tenantId: string | null): SandboxUser;
  plan(command: string, args: readonly string[], spec: SandboxSpec): SpawnPlan;
  /** A fresh directory only the platform and `user` can enter (mode 700). */
  makeControlDir(user: SandboxUser): Promise<ControlDir>;
}

/** The OS sandbox cannot be set up; user code must not run. */
export class SandboxUnavailableError extends Error {}

export interface OsSandboxOptions {
  /** `allow` runs user code without the OS boundary (UNSAFE_USER_CODE=allow). */
  readonly unsafeUserCode?: 'allow';
  /**
   * The uids (and gids of the same numbers) sandboxes run as when the platform is root
   * (`SANDBOX_UID_RANGE`, default `DEFAULT_UID_RANGE`). They must own nothing on this machine: no
   * user, group or subordinate range of /etc/passwd, /etc/group, /etc/subuid or /etc/subgid.
   */
  readonly uidRange?: UidRange;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  readonly bwrap?: string;
  /**
   * Most processes and threads one tenant's sandboxes may have at once (RLIMIT_NPROC of its uid,
   * default 1024), against fork bombs and thread hoarding. An MCP host uses about ten, a Python run
   * a few dozen. Applied only with uids of the platform's own (as root): without them the limit
   * would count the operator's own processes too.
   */
  readonly maxProcesses?: number;
  /**
   * How many nice steps below the platform user code runs (`SANDBOX_NICE`, default
   * `DEFAULT_SANDBOX_NICE`; 0 leaves it at the platform's own): see `SandboxPriority`.
   */
  readonly nice?: number;
  readonly logger?: Logger;
}

/** Files of /etc a sandbox may read: TLS trust, time zones, the dynamic linker's cache. Nothing secret. */
const ETC_FILES = [
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
  '/etc/localtime',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/mime.types',
];
/** Top-level directories that are symlinks into /usr on merged-/usr systems, or directories elsewhere. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const DEFAULT_MAX_PROCESSES = 1024;
/**
 * The default `SANDBOX_NICE`: the kernel weighs a nice-10 task about a tenth of a nice-0 one, so
 * the platform's request loop runs first when both want a core, and user code still gets every
 * cycle the platform leaves.
 */
export const DEFAULT_SANDBOX_NICE = 10;
const NO_BWRAP =
  'User code cannot run: bubblewrap (bwrap) is not installed. Install it (Debian/Ubuntu: apt-get install bubblewrap), or set UNSAFE_USER_CODE=allow to run user code without an OS sandbox (never with code you do not trust).';
/** Open files per sandboxed process; soft and hard, so user code cannot raise it. */
const MAX_OPEN_FILES = 1024;

/**
 * The sandbox the local runtimes use, checked once by starting a trivial sandboxed process: a
 * missing `bwrap`, or a kernel that refuses unprivileged user namespaces, fails here with the fix.
 */
export async function prepareOsSandbox(options: OsSandboxOptions = {}): Promise<OsSandbox> {
  if (options.unsafeUserCode === 'allow') {
    options.logger?.error(
      "UNSAFE_USER_CODE=allow: user code runs WITHOUT the OS sandbox; any tenant can read this machine's files and reach its network. Never use this with code you do not trust.",
      {},
    );
    return unsafeSandbox();
  }
  const root = process.getuid?.() === 0;
  const range = options.uidRange ?? DEFAULT_UID_RANGE;
  const maxProcesses = options.maxProcesses ?? DEFAULT_MAX_PROCESSES;
  // RLIMIT_NICE and RLIMIT_RTPRIO at 0, hard too: without CAP_SYS_NICE (dropped) the kernel then
  // refuses a lower nice value and a real-time policy, whatever the platform's own limits allow.
  const limits = [`--core=0:0`, `--nofile=${MAX_OPEN_FILES}:${MAX_OPEN_FILES}`, '--nice=0:0', '--rtprio=0:0'];
  if (root) {
    const owned = await ownersInRange(range);
    if (owned.length > 0)
      throw new SandboxUnavailableError(
        `User code cannot run: SANDBOX_UID_RANGE ${range.first}-${range.last} holds ids this machine already uses (${owned.slice(0, 5).join('; ')}). Sandboxes run as these uids, so they must own nothing: choose a range no user, group or subordinate range (/etc/subuid, /etc/subgid) touches.`,
      );
    limits.push(`--nproc=${maxProcesses}:${maxProcesses}`);
  }
  const bwrap = findOnPath(options.bwrap ?? 'bwrap');
  if (bwrap === null) throw new SandboxUnavailableError(NO_BWRAP);
  const prlimit = findOnPath('prlimit');
  if (prlimit === null)
    throw new SandboxUnavailableError(
      'User code cannot run: prlimit (util-linux) is not installed; the sandbox needs it to set resource limits. Install util-linux.',
    );
  const launcher = { prlimit, limits, bwrap, priority: sandboxPriority(options.nice ?? DEFAULT_SANDBOX_NICE) };
  const users = root ? { range, maxProcesses, lease: uidLeases(range) } : null;
  const sandbox = bubblewrap(launcher, await systemBinds(), users);
  await probe(sandbox);
  return sandbox;
}

/**
 * How a sandbox is started: coreutils `nice` lowers its priority, util-linux `prlimit` sets
 * resource limits, then bubblewrap runs in place (each execs the next).
 */
interface Launcher {
  readonly prlimit: string;
  readonly limits: readonly string[];
  readonly bwrap: string;
  readonly priority: SandboxPriority;
}

/**
 * User code's CPU priority, decided outside the sandbox and out of its reach. Two settings carry
 * it, because the kernel's scheduler first shares the cores between sessions when its autogroup
 * feature is on (`kernel.sched_autogroup_enabled`, the default of most distributions) and only
 * then between a session's tasks by their nice value, and each sandbox is a session of its own
 * (spawn's `detached`):
 *
 * - the task's nice value, given by `nice` before the sandbox starts and inherited by every process
 *   inside; RLIMIT_NICE 0 and no CAP_SYS_NICE keep it from being lowered;
 * - the nice value of the sandbox's session (its autogroup, `/proc/PID/autogroup`), written by the
 *   platform once the sandbox is spawned. Its /proc is read-only, so it cannot write it back, and
 *   its seccomp filter refuses `setsid`, which would start a fresh session at nice 0.
 */
interface SandboxPriority {
  /** 0: the platform's own priority, nothing is set. */
  readonly nice: number;
  /** `nice -n N`, prepended to the command; empty for 0. */
  readonly prefix: readonly string[];
  /** The filter bubblewrap installs; null at nice 0 (nothing to hold) or on an architecture it is not written for. */
  readonly seccompFilter: Buffer | null;
}

function sandboxPriority(nice: number): SandboxPriority {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new SandboxUnavailableError(`SANDBOX_NICE must be a whole number from 0 to 19, not ${nice}`);
  if (nice === 0) return { nice, prefix: [], seccompFilter: null };
  const niceBinary = findOnPath('nice');
  if (niceBinary === null)
    throw new SandboxUnavailableError(
      'User code cannot run: nice (coreutils) is not installed; the sandbox needs it for SANDBOX_NICE. Install coreutils, or set SANDBOX_NICE=0.',
    );
  return { nice, prefix: [niceBinary, '-n', String(nice)], seccompFilter: noNewSessionFilter() };
}

/** Each architecture's seccomp audit value and `setsid` number (linux/audit.h, the syscall tables). */
const SETSID_BY_ARCH: Partial<Record<NodeJS.Architecture, { readonly audit: number; readonly setsid: number }>> = {
  x64: { audit: 0xc000003e, setsid: 112 },
  arm64: { audit: 0xc00000b7, setsid: 157 },
};

/**
 * A classic BPF seccomp program, as bubblewrap's `--seccomp` reads it: `setsid` fails with EPERM,
 * and so does every call of another architecture's ABI (i386 through int 0x80, x32), which would
 * otherwise reach `setsid` under another number. Null on an architecture not listed above.
 */
function noNewSessionFilter(): Buffer | null {
  const arch = SETSID_BY_ARCH[process.arch];
  if (arch === undefined) return null;
  const LD_W_ABS = 0x20;
  const JEQ_K = 0x15;
  const JGE_K = 0x35;
  const RET_K = 0x06;
  const ALLOW = 0x7fff0000;
  const EPERM = 0x00050000 | 1;
  const X32_SYSCALL_BIT = 0x40000000;
  // [code, jump if true, jump if false, k]; jumps count from the next instruction.
  const program: [number, number, number, number][] = [
    [LD_W_ABS, 0, 0, 4], // seccomp_data.arch
    [JEQ_K, 0, 4, arch.audit],
    [LD_W_ABS, 0, 0, 0], // seccomp_data.nr
    [JGE_K, 2, 0, X32_SYSCALL_BIT],
    [JEQ_K, 1, 0, arch.setsid],
    [RET_K, 0, 0, ALLOW],
    [RET_K, 0, 0, EPERM],
  ];
  const filter = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    filter.writeUInt16LE(code, i * 8);
    filter.writeUInt8(jt, i * 8 + 2);
    filter.writeUInt8(jf, i * 8 + 3);
    filter.writeUInt32LE(k, i * 8 + 4);
  });
  return filter;
}

/** How sandboxes get uids when the platform is root. */
interface Users {
  readonly range: UidRange;
  readonly maxProcesses: number;
  readonly lease: (owner: string) => SandboxUser;
}

function bubblewrap(launcher: Launcher, systemArgs: readonly string[], users: Users | null): OsSandbox {
  const who =
    users === null
      ? "the platform's own uid (not root: namespaces only, no per-tenant process limit)"
      : `a uid per tenant from ${users.range.first}-${users.range.last}, at most ${users.maxProcesses} processes and threads per tenant (kernel.pid_max ${pidMax() ?? 'unknown'} for the whole machine)`;
  return {
    kind: 'bubblewrap',
    description: `bubblewrap: own user, pid, ipc, mount, network and uts namespaces, no capabilities, read-only system, limits ${launcher.limits.join(' ')}, ${priorityDescription(launcher.priority)}, ${who}`,
    user(tenantId) {
      return users === null ? { release: () => {} } : users.lease(tenantId === null ? `process:${randomUUID()}` : `tenant:${tenantId}`);
    },
    plan(command, args, spec) {
      const binds = outermost(spec.readOnly.filter((path) => !path.startsWith('/usr/'))).flatMap((path) => ['--ro-bind', path, path]);
      const env = Object.entries(spec.env).flatMap(([name, value]) => ['--setenv', name, value]);
      const { priority } = launcher;
      const [program = launcher.prlimit, ...prefixArgs] = [...priority.prefix, launcher.prlimit];
      return {
        command: program,
        args: [
          ...prefixArgs,
          ...launcher.limits,
          launcher.bwrap,
          '--unshare-all',
          '--unshare-user',
          '--disable-userns',
          '--die-with-parent',
          // No --new-session: the sandbox stays in the process group the platform made for it
          // (spawn's `detached`, which also leaves it without a controlling terminal to abuse),
          // so stopping that group stops everything inside.
          '--cap-drop',
          'ALL',
          '--hostname',
          'sandbox',
          ...systemArgs,
          '--proc',
          '/proc',
          // Read-only, so that user code cannot write its session's priority (/proc/self/autogroup) back.
          '--remount-ro',
          '/proc',
          ...(priority.seccompFilter !== null ? ['--seccomp', '3'] : []),
          '--dev',
          '/dev',
          // The private /tmp before the binds: bubblewrap mounts in order, and code that lives
          // under /tmp on the host (a checkout in /tmp) must stay visible on top of it.
          '--size',
          String(spec.tmpfsBytes),
          '--tmpfs',
          '/tmp',
          ...binds,
          '--bind',
          spec.controlDir,
          SANDBOX_CONTROL_DIR,
          '--chdir',
          spec.cwd,
          '--clearenv',
          ...env,
          '--',
          command,
          ...args,
        ],
        // bwrap itself gets nothing (it is the sandbox's init, whose environment its processes
        // can read): --clearenv and --setenv give the process its environment.
        env: {},
        cwd: '/',
        ...(spec.user.uid !== undefined ? { uid: spec.user.uid, gid: spec.user.gid ?? spec.user.uid } : {}),
        ...(priority.seccompFilter !== null ? { seccompFilter: priority.seccompFilter } : {}),
        ...(priority.nice > 0 ? { autogroupNice: priority.nice } : {}),
      };
    },
    async makeControlDir(user) {
      const hostPath = await mkdtemp(join(tmpdir(), 'svc-sbx-'));
      if (user.uid !== undefined) await chown(hostPath, user.uid, user.gid ?? user.uid);
      return controlDir(hostPath, SANDBOX_CONTROL_DIR);
    },
  };
}

function priorityDescription(priority: SandboxPriority): string {
  if (priority.nice === 0) return "the platform's CPU priority (SANDBOX_NICE=0)";
  return `nice ${priority.nice} (task and session)${priority.seccompFilter === null ? `, setsid not filtered on ${process.arch}` : ', setsid refused'}`;
}

/** The paths not inside another of them, so that nothing is bound twice. */
function outermost(paths: readonly string[]): string[] {
  const trimmed = [...new Set(paths.map((path) => path.replace(/\/+$/, '') || '/'))].sort();
  return trimmed.filter((path) => !trimmed.some((other) => other !== path && path.startsWith(`${other}/`)));
}

function unsafeSandbox(): OsSandbox {
  return {
    kind: 'unsafe',
    description: "NONE (UNSAFE_USER_CODE=allow): user code runs as the platform's own user",
    user: () => ({ release: () => {} }),
    plan(command, args, spec) {
      return { command, args, env: { ...spec.env }, cwd: spec.cwd };
    },
    async makeControlDir() {
      const hostPath = await mkdtemp(join(tmpdir(), 'svc-sbx-'));
      return controlDir(hostPath, hostPath);
    },
  };
}

function controlDir(hostPath: string, insidePath: string): ControlDir {
  return {
    hostPath,
    inside: (name) => `${insidePath}/${name}`,
    onHost: (name) => join(hostPath, name),
    remove: () => rm(hostPath, { recursive: true, force: true }),
  };
}

/** `name` as an absolute path found on the platform's PATH (bubblewrap runs with an empty environment), or null. */
export function findOnPath(name: string): string | null {
  if (name.includes('/')) return existsSync(name) ? name : null;
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(':')) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/**
 * Starts a planned process in its own process group (stopping the group stops everything inside),
 * as the plan's user, with stdout and stderr piped. Given lines, they are written to stdin first
 * (the control secret) and stdin stays open: its end tells a server to exit, so one whose platform
 * was killed outright exits by itself. Given null, stdin is closed.
 */
export function spawnPlan(plan: SpawnPlan, stdinLines: readonly string[] | null): ChildProcess {
  const child = spawn(plan.command, plan.args, {
    cwd: plan.cwd,
    env: plan.env,
    stdio: [stdinLines === null ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(plan.seccompFilter !== undefined ? ['pipe' as const] : [])],
    detached: true,
    ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid ?? plan.uid } : {}),
  });
  if (plan.seccompFilter !== undefined) {
    // bubblewrap reads the filter to its end before it starts the sandbox, then closes the fd.
    const filterPipe = child.stdio[3] as Writable | null;
    filterPipe?.on('error', () => {});
    filterPipe?.end(plan.seccompFilter);
  }
  // spawn has returned, so the child has made its session (detached): its autogroup exists.
  if (plan.autogroupNice !== undefined && child.pid !== undefined) setAutogroupNice(child.pid, plan.autogroupNice);
  if (stdinLines !== null) {
    child.stdin!.on('error', () => {});
    child.stdin!.write(stdinLines.map((line) => `${line}\n`).join(''));
  }
  return child;
}

/**
 * Lowers the CPU share of `pid`'s session (its autogroup). Absent when the kernel has no autogroups
 * (the task's nice value then does it all). As root the write always succeeds; otherwise the
 * kernel takes one such write every 100 ms machine-wide, so a refused one is tried again later.
 */
function setAutogroupNice(pid: number, nice: number, attempt = 0): void {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN' && attempt < 10) setTimeout(() => setAutogroupNice(pid, nice, attempt + 1), 110).unref();
  }
}

/** Binds for the base system: /usr read-only, the merged-/usr symlinks as symlinks, a few /etc files. */
async function systemBinds(): Promise<string[]> {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of SYSTEM_DIRS) {
    const info = await lstat(dir).catch(() => null);
    if (info === null) continue;
    if (info.isSymbolicLink()) args.push('--symlink', await readlink(dir), dir);
    else if (info.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const file of ETC_FILES) if (existsSync(file)) args.push('--ro-bind', file, file);
  return args;
}

/** Starts `true` in the sandbox; a failure says what bubblewrap said and how to fix it. */
async function probe(sandbox: OsSandbox): Promise<void> {
  const user = sandbox.user(null);
  const dir = await sandbox.makeControlDir(user);
  try {
    const plan = sandbox.plan('/usr/bin/env', ['true'], {
      readOnly: [],
      controlDir: dir.hostPath,
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      tmpfsBytes: 1024 * 1024,
      user,
    });
    const outcome = await new Promise<{ code: number | null; stderr: string; error?: NodeJS.ErrnoException }>((resolve) => {
      const child = spawnPlan(plan, null);
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, stderr, error }));
      child.once('close', (code) => resolve({ code, stderr }));
    });
    if (outcome.error?.code === 'ENOENT') throw new SandboxUnavailableError(NO_BWRAP);
    if (outcome.code !== 0) {
      const said = (outcome.error?.message ?? outcome.stderr).trim() || `exit code ${outcome.code}`;
      throw new SandboxUnavailableError(
        `User code cannot run: the OS sandbox (bubblewrap) failed to start: ${said}. The kernel must allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap). Set UNSAFE_USER_CODE=allow to run user code without it (never with code you do not trust).`,
      );
    }
  } finally {
    await dir.remove();
    user.release();
  }
}

/**
 * Leases of the range's uids: an owner's preferred uid is a hash of its name, so a tenant keeps
 * the same uid from start to start (logs and `ps` name it); one taken by another owner sends it
 * to the next free one. A uid serves one owner until its last lease is given back.
 */
function uidLeases(range: UidRange): (owner: string) => SandboxUser {
  const size = range.last - range.first + 1;
  const held = new Map<number, { leases: number }>();
  const uidOf = new Map<string, number>();
  const free = (owner: string): number => {
    const preferred = createHash('sha256').update(owner).digest().readUInt32BE(0) % size;
    for (let step = 0; step < size; step++) {
      const uid = range.first + ((preferred + step) % size);
      if (!held.has(uid)) return uid;
    }
    throw new SandboxUnavailableError(`every uid of SANDBOX_UID_RANGE (${range.first}-${range.last}) serves a running sandbox; give the range more ids`);
  };
  return (owner) => {
    const uid = uidOf.get(owner) ?? free(owner);
    const lease = held.get(uid) ?? { leases: 0 };
    lease.leases++;
    held.set(uid, lease);
    uidOf.set(owner, uid);
    let released = false;
    return {
      uid,
      gid: uid,
      release() {
        if (released) return;
        released = true;
        if (--lease.leases > 0) return;
        held.delete(uid);
        uidOf.delete(owner);
      },
    };
  };
}

/** What on this machine already uses an id of `range`: users, groups, subordinate ranges. */
async function ownersInRange(range: UidRange): Promise<string[]> {
  const found: string[] = [];
  const inRange = (id: number) => id >= range.first && id <= range.last;
  for (const [file, field] of [
    ['/etc/passwd', 2],
    ['/etc/group', 2],
  ] as const) {
    for (const line of (await readFile(file, 'utf8').catch(() => '')).split('\n')) {
      const fields = line.split(':');
      const id = Number(fields[field]);
      if (fields[field] !== undefined && fields[field] !== '' && inRange(id)) found.push(`${fields[0]} (${id}) in ${file}`);
    }
  }
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    for (const line of (await readFile(file, 'utf8').catch(() => '')).split('\n')) {
      const [name, start, count] = line.split(':');
      const first = Number(start);
      const last = first + Number(count) - 1;
      if (Number.isInteger(first) && Number.isInteger(last) && first <= range.last && last >= range.first) found.push(`${name}'s ${first}-${last} in ${file}`);
    }
  }
  return found;
}

/** The machine's most pids at once (threads included), shared by every tenant whatever their limits; null if unknown. */
function pidMax(): number | null {
  try {
    return Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) || null;
  } catch {
    return null;
  }
}

/**
 * `SANDBOX_UID_RANGE` as written (`FIRST-LAST`), or an error message: ids above 0 (root) and below
 * 4294967295 (the kernel's "no id"), the first not after the last.
 */
export function parseUidRange(text: string): UidRange | string {
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text);
  if (match === null) return 'must be FIRST-LAST, e.g. 1879048192-1879113727';
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1 || last > 4_294_967_294) return 'ids must lie between 1 and 4294967294';
  if (first > last) return 'the first id must not be after the last';
  return { first, last };
}

/**
 * Why the sandbox's user cannot read `path`, or null when it can: bubblewrap binds as that user,
 * so an interpreter under a private home (`/root/.pyenv`) fails with a bare "Permission denied".
 */
export async function unreadableBy(path: string, uid: number | undefined): Promise<string | null> {
  if (uid === undefined) return null;
  const parts = path.split('/').filter(Boolean);
  let current = '';
  for (const part of parts) {
    current += `/${part}`;
    const info = await lstat(current).catch(() => null);
    if (info === null) return `${current} does not exist`;
    if (!info.isDirectory()) continue;
    const mode = info.mode;
    const canEnter = info.uid === uid ? (mode & 0o100) !== 0 : (mode & 0o001) !== 0;
    if (!canEnter) return `${current} (mode ${(mode & 0o777).toString(8)}) cannot be entered by uid ${uid}`;
  }
  return null;
}
