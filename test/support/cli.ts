import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLES = join(repoRoot, '.tmp', 'cli-bundle');

let bundled: Promise<string> | undefined;

/**
 * The CLI's sources and packages bundled into one file for plain node: the launcher's tsx compiles
 * the sources and node resolves hundreds of package files on every start, 1.1 s of CPU per command
 * against 0.35 s, and the CLI test files run about 60 commands. The same esbuild transform tsx
 * applies, so the commands behave alike; the bundle is built from the current sources once per test
 * process and named by its content, so a concurrent file writes the same bytes or reads the same file.
 */
function cliBundle(): Promise<string> {
  bundled ??= (async () => {
    const result = await build({
      entryPoints: [join(repoRoot, 'bin/cli.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      logLevel: 'silent',
      // Packages written as CommonJS call require for node's modules, which an ES module lacks.
      banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
    });
    const code = result.outputFiles[0]!.contents;
    const file = join(BUNDLES, `cli-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
    if (!existsSync(file)) {
      mkdirSync(BUNDLES, { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, code);
      renameSync(partial, file);
    }
    return file;
  })();
  return bundled;
}

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

/**
 * Starts the CLI (bundled, see `cliBundle`) as its own process from the checkout: its own exit code,
 * stdin, environment and signals, as a user's `npx agent-platform` has. `runNpm` reaches the launcher package.json's `bin` names
 * (bin/agent-platform.mjs, under tsx) as users do.
 */
export async function spawnCli(args: readonly string[], options: CliOptions = {}): Promise<ChildProcessWithoutNullStreams> {
  return spawn(process.execPath, [await cliBundle(), ...args], { cwd: repoRoot, env: cliEnv(options.env) });
}

/** Runs the CLI to its end and collects what it printed. */
export async function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return finished(await spawnCli(args, options), options.input);
}

/** Runs npm from the checkout (`npm exec` is what `npx` runs, through the launcher), with the CLI's settings as for `runCli`. */
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

let inProcessTurn: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI's `runCli` (bin/cli/main.ts) in this process, for a command line refused or answered
 * before any connection (usage errors, help): what it prints to the console is collected and the
 * exit code is what bin/cli.ts would set. A child process costs about a second for these, and the
 * process-level behaviour (exit code, streams, stdin, signals) is what `runCli` checks elsewhere.
 * Runs one at a time, since the console is the process's.
 */
export function runCliInProcess(args: readonly string[]): Promise<CliResult> {
  const run = inProcessTurn.then(async () => {
    const { runCli: main } = await import('../../bin/cli/main.ts');
    const printed = { stdout: '', stderr: '' };
    const { log, error } = console;
    const collect =
      (stream: keyof typeof printed) =>
      (...parts: unknown[]) =>
        void (printed[stream] += `${parts.map(String).join(' ')}\n`);
    Object.assign(console, { log: collect('stdout'), error: collect('stderr') });
    try {
      const code = await main(args);
      return { code, signal: null, ...printed };
    } finally {
      Object.assign(console, { log, error });
    }
  });
  inProcessTurn = run.catch(() => undefined);
  return run;
}
