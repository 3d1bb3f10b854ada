/**
 * What both local runtime adapters do to start one pooled process in the OS sandbox (the Python
 * runtime server in adapters/compute/local.ts, the MCP host in adapters/mcp-runtime/local.ts):
 * lease a uid and a control directory, spawn the planned process in its own group, read its
 * `listening` line, and give everything back, in order, once the process and its group are gone.
 * What runs, with which binds and which egress, stays with the adapters.
 */
import type { ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import type { ControlDir, OsSandbox, SandboxUser, SpawnPlan } from './os-sandbox.ts';
import { spawnPlan } from './os-sandbox.ts';
import { launch, type ExitStatus, type Launched, type LaunchOptions, type PooledProcess, type PoolProcess } from './process-pool.ts';

/** A uid and control directory held for one process, and what else the adapter opened for it. */
export interface SandboxLease {
  readonly sandbox: OsSandbox;
  readonly user: SandboxUser;
  readonly dir: ControlDir;
  /** Runs `step` when the lease is released, before the directory goes and the uid is given back. */
  onRelease(step: () => Promise<unknown> | unknown): void;
  /** True once `release` was called: a step opened after that must close itself. */
  readonly released: boolean;
  /** Gives everything back, once; later calls wait for the first. */
  release(): Promise<void>;
}

/**
 * Leases a uid (the tenant's, or one of its own for `null`) and a control directory in the sandbox
 * `sandboxReady` resolves to. A sandbox that cannot be set up rejects with `unavailable`'s error.
 */
export async function leaseSandbox(sandboxReady: Promise<OsSandbox>, tenantId: string | null, unavailable: (message: string) => Error): Promise<SandboxLease> {
  let sandbox: OsSandbox;
  try {
    sandbox = await sandboxReady;
  } catch (error) {
    throw unavailable(messageOf(error));
  }
  const user = sandbox.user(tenantId);
  const dir = await sandbox.makeControlDir(user).catch((error: unknown) => {
    user.release();
    throw error;
  });
  const steps: (() => Promise<unknown> | unknown)[] = [];
  let releasing: Promise<void> | null = null;
  const lease: SandboxLease = {
    sandbox,
    user,
    dir,
    onRelease: (step) => void steps.push(step),
    get released() {
      return releasing !== null;
    },
    release: () =>
      (releasing ??= (async () => {
        for (const step of steps) await Promise.resolve(step()).catch(() => undefined);
        await dir.remove().catch(() => undefined);
        user.release();
      })()),
  };
  return lease;
}

/** What `launchSandboxed` adds to `launch`'s options. */
export interface SandboxedLaunch extends Omit<LaunchOptions, 'socketOnHost' | 'onStderr'> {
  /** Lines written to the process's stdin at once (its control secret, credentials). */
  readonly stdinLines: readonly string[];
  /** Receives the process's stderr lines, with its pid for logs. */
  readonly onStderr?: (line: string, pid: number | undefined) => void;
}

/**
 * Spawns `plan` in its own process group and waits for its `listening` line on a socket of the
 * lease's control directory. The process's `dispose` closes its stdin and releases the lease (the
 * pool calls it once the process and its group are gone).
 */
export async function launchSandboxed(
  lease: SandboxLease,
  plan: SpawnPlan,
  options: SandboxedLaunch,
): Promise<Launched & Required<Pick<PoolProcess, 'dispose'>> & { readonly child: ChildProcess }> {
  const { stdinLines, onStderr, ...launchOptions } = options;
  const child = spawnPlan(plan, stdinLines);
  const launched = await launch(child, {
    ...launchOptions,
    ...(onStderr ? { onStderr: (line: string) => onStderr(line, child.pid) } : {}),
    socketOnHost: (announced) => lease.dir.onHost(basename(announced)),
  });
  return {
    ...launched,
    child,
    dispose: () => {
      child.stdin?.destroy();
      void lease.release();
    },
  };
}

/**
 * The process's exit, if it comes within `ms`: a refused or dropped connection may precede the
 * exit event, and a dead process is worth one retry on a new one while a live one is not.
 */
export async function exitWithin(proc: PooledProcess<PoolProcess, string>, ms: number): Promise<ExitStatus | null> {
  if (proc.exit !== null) return proc.exit;
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([proc.handle.exited, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  clearTimeout(timer);
  return exit;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
