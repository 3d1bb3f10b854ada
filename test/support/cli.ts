import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The launcher package.json's `bin` names: what `npx agent-platform` runs. */
const LAUNCHER = 'bin/agent-platform.mjs';

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Variables on top of the caller's environment, which loses its PLATFORM_*, DATA_DIR and XDG_CONFIG_HOME. */
  readonly env?: Record<string, string>;
  /** Written to the CLI's stdin, which is then closed (closed at once without it). */
  readonly input?: string;
}

/** The caller's environment without the settings the CLI reads, so a developer's login never leaks in. */
function cliEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PLATFORM_URL: _url, PLATFORM_TOKEN: _token, DATA_DIR: _dataDir, XDG_CONFIG_HOME: _config, NO_COLOR: _noColor, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** Starts the CLI through its launcher, from the checkout, as a user's `npx agent-platform` does. */
export function spawnCli(args: readonly string[], options: CliOptions = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [LAUNCHER, ...args], { cwd: repoRoot, env: cliEnv(options.env) });
}

/** Runs the CLI to its end and collects what it printed. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return finished(spawnCli(args, options), options.input);
}

/** Runs npm from the checkout (`npm exec` is what `npx` runs), with the CLI's settings as for `runCli`. */
export function runNpm(npmArgs: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return finished(spawn('npm', npmArgs, { cwd: repoRoot, env: cliEnv(env) }));
}

export function finished(child: ChildProcessWithoutNullStreams, input?: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** What a stream has printed since `recordOutput` was called on it. */
export interface RecordedOutput {
  /** Resolves with all the text so far once it matches `pattern`; rejects if the stream ends first. */
  until(pattern: RegExp): Promise<string>;
}

/**
 * Starts collecting `stream`'s text at once. Call it right after spawning: a listener attached
 * later would miss what was printed before, and a wait for it would never end.
 */
export function recordOutput(stream: NodeJS.ReadableStream): RecordedOutput {
  let seen = '';
  let ended = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.toString('utf8');
    notify();
  });
  stream.once('end', () => {
    ended = true;
    notify();
  });
  return {
    until: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(seen)) resolve(seen);
          else if (ended) reject(new Error(`the output ended without ${String(pattern)}:\n${seen}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}
