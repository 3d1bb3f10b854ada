/**
 * `npm test`: every TypeScript test (vitest), every Python runtime test (unittest, run beside
 * vitest, its output held and printed after vitest's), and the framework tier (test/frameworks:
 * real Strands agents, when STRANDS_PYTHON names an interpreter that has it; otherwise one line
 * says it was skipped), then one closing line `N passed, N failed` over all. Exit status is
 * non-zero if any suite failed. With arguments (vitest's: files, filters) or `--typescript`,
 * vitest alone; `--frameworks` (npm run test:frameworks), the tier alone.
 *
 * `--fast` (npm run test:fast): the unit tests and the contract suites of the ports whose adapters
 * run in this process or against a store or AWS stand-in (secret box, task queue, schedules, search
 * index), but not the two contract suites that start sandboxed runtimes (test/contract/compute and
 * mcp-runtime: bubblewrap hosts and Lambda stand-in environments, three quarters of the tier's time):
 * those run in `npm test` only (the `unit` project of vitest.config.ts; docs/decisions/0036-fast-test-tier.md).
 * No platform is started and nothing is synthesized.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;
const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });

/**
 * Colour for a terminal only. Vitest's colours (tinyrainbow) do not look at whether stdout is a
 * terminal, so a piped or logged run (CI) was full of escape codes; NO_COLOR turns them off there.
 * NO_COLOR or FORCE_COLOR set by the caller wins either way.
 */
const colourEnv: NodeJS.ProcessEnv =
  process.stdout.isTTY || 'NO_COLOR' in process.env || 'FORCE_COLOR' in process.env ? process.env : { ...process.env, NO_COLOR: '1' };

/**
 * The environment with `python3`'s own directory first on PATH. Under pyenv, `python3` on PATH is
 * a shell script that runs several more before the interpreter: 0.4 s of CPU a call against 0.07 s,
 * and a run makes hundreds (each test platform's interpreter probe, cfn-lint, moto, test helpers).
 * The interpreter is the one the shim would run; only its lookup is done once, here. Unchanged when
 * `python3` is missing or already the real executable.
 */
function withInterpreterFirst(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const found = spawnSync('python3', ['-c', 'import os, sys; print(os.path.dirname(sys.executable))'], { encoding: 'utf8', env });
  const dir = found.status === 0 ? found.stdout.trim() : '';
  if (dir === '' || (env['PATH'] ?? '').split(delimiter)[0] === dir) return env;
  return { ...env, PATH: `${dir}${delimiter}${env['PATH'] ?? ''}` };
}

const childEnv = withInterpreterFirst(colourEnv);

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  ok: boolean;
}

/** The exit code of `command`, its output going to this process's (vitest's own progress shows as it runs). */
function runInherited(command: string, args: readonly string[]): Promise<number | null> {
  const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: childEnv });
  return new Promise((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
}

/** A piped run's exit code and output (stdout, stderr), or the error that kept it from starting. */
function runBuffered(command: string, args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }> {
  const child = spawn(command, args, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ status: null, stdout, stderr, error }));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Where the output is not a terminal (CI, a pipe), a line a minute on how far vitest is
 * (test/support/progress-reporter.ts); a terminal has vitest's own live summary.
 */
const progress = process.stdout.isTTY ? [] : ['--reporter=./test/support/progress-reporter.ts'];

async function runVitest(extraArgs: readonly string[]): Promise<Tally> {
  // One report per pass, so a run started by a test of this runner leaves the outer run's alone.
  const report = join(tmp, `vitest-report-${process.pid}-${++vitestRuns}.json`);
  rmSync(report, { force: true });
  const status = await runInherited(process.execPath, [
    join(root, 'node_modules/vitest/vitest.mjs'),
    'run',
    '--reporter=default',
    ...progress,
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...extraArgs,
  ]);
  try {
    const text = readFileSync(report, 'utf8');
    rmSync(report, { force: true });
    const parsed = JSON.parse(text) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
    };
    return { passed: parsed.numPassedTests, failed: parsed.numFailedTests, skipped: parsed.numPendingTests + parsed.numTodoTests, ok: status === 0 };
  } catch {
    // No report means vitest itself failed (e.g. a file did not compile): count it as one failure.
    return { passed: 0, failed: 1, skipped: 0, ok: false };
  }
}
let vitestRuns = 0;

/** One interpreter's run of the runtime's suite: its tally, and its output to print when the caller is ready for it. */
async function runPython(interpreter: string): Promise<{ tally: Tally; output: () => void }> {
  const result = await runBuffered(interpreter, ['-m', 'unittest', 'discover', '-s', 'python-runtime', '-p', 'test_*.py', '-t', 'python-runtime']);
  if (result.error) {
    const message = result.error.message;
    return { tally: { passed: 0, failed: 1, skipped: 0, ok: false }, output: () => console.error(`${interpreter} could not be run: ${message}`) };
  }
  const output = result.stderr + result.stdout;
  const ran = Number(/Ran (\d+) tests?/.exec(output)?.[1] ?? 0);
  const count = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(output)?.[1] ?? 0);
  const failed = count('failures') + count('errors') + count('unexpected successes');
  const skipped = count('skipped') + count('expected failures');
  // unittest exits 5 when it found no tests (3.12+): that is not a failure of the suite.
  const ok = result.status === 0 || (result.status === 5 && ran === 0);
  return {
    tally: { passed: Math.max(0, ran - failed - skipped), failed: ok ? failed : Math.max(failed, 1), skipped, ok },
    output: () => {
      console.log(`\nPython runtime tests (${interpreter}):\n`);
      process.stdout.write(result.stdout);
      process.stdout.write(result.stderr);
    },
  };
}

// `--typescript` (npm run test:ts): vitest only, with the same plain output when piped.
const typescriptOnly = process.argv.includes('--typescript');
const frameworksOnly = process.argv.includes('--frameworks');
const fast = process.argv.includes('--fast');
const args = process.argv.slice(2).filter((arg) => arg !== '--typescript' && arg !== '--frameworks' && arg !== '--fast');
const whole = args.length === 0 && !typescriptOnly && !frameworksOnly && !fast;

/** The framework tier as its own vitest project (vitest.config.ts), or why it cannot run here. */
async function runFrameworkTier(): Promise<Tally | null> {
  if (!process.env['STRANDS_PYTHON']) {
    console.log(
      'Framework tier skipped: STRANDS_PYTHON is not set (an interpreter with the real Strands SDK; build one with ../shared/frameworks/build-strands-env.sh, see ../shared/frameworks/README.md).',
    );
    return null;
  }
  console.log(`\nFramework tier (real Strands, ${process.env['STRANDS_PYTHON']}):\n`);
  return runVitest(['--project', 'frameworks', ...args]);
}

if (frameworksOnly) {
  const tier = await runFrameworkTier();
  if (tier === null) process.exit(0);
  console.log(`${tier.passed} passed, ${tier.failed} failed${tier.skipped > 0 ? `, ${tier.skipped} skipped` : ''}`);
  process.exit(tier.ok && tier.failed === 0 ? 0 : 1);
}

// The whole suite is long: say so up front (the figure measured on 2 cores, README Development).
if (whole) console.log('Running every test: about 13 minutes on 2 cores (vitest and the Python suite side by side, then the framework tier).\n');
// The runtime supports several Python versions; PYTHON_INTERPRETERS (comma-separated) runs its suite under each.
const interpreters = (process.env['PYTHON_INTERPRETERS'] ?? 'python3')
  .split(',')
  .map((i) => i.trim())
  .filter(Boolean);
// Beside vitest, one interpreter after the other (two cores: vitest has two workers already).
const python = whole
  ? (async () => {
      const runs = [];
      for (const interpreter of interpreters) runs.push({ interpreter, ...(await runPython(interpreter)) });
      return runs;
    })()
  : Promise.resolve([]);
// Without arguments the tier's files wait for their own pass; given files or filters, vitest finds them wherever they are.
// `--fast`: the unit project (vitest.config.ts), no platform started and nothing synthesized.
const vitestArgs = fast ? ['--project', 'unit', ...args] : args.length === 0 ? ['--project', 'main', '--project', 'unit', '--project', 'infra'] : args;
const ts = await runVitest(vitestArgs);
const pyRuns = await python;
// Each Python suite's output in one piece, after vitest's, so neither is cut into the other.
for (const run of pyRuns) run.output();
const tier = whole ? await runFrameworkTier() : null;
const tallies = [ts, ...pyRuns.map((run) => run.tally), ...(tier ? [tier] : [])];
const passed = tallies.reduce((sum, t) => sum + t.passed, 0);
const failed = tallies.reduce((sum, t) => sum + t.failed, 0);
const skipped = tallies.reduce((sum, t) => sum + t.skipped, 0);
const describe = (name: string, t: Tally) => `${name}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;
const parts = [
  describe('TypeScript', ts),
  ...pyRuns.map(({ interpreter, tally }) => describe(`Python (${interpreter})`, tally)),
  ...(tier ? [describe('Frameworks (Strands)', tier)] : []),
];
console.log(`\n${parts.join('; ')}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(tallies.every((t) => t.ok) && failed === 0 ? 0 : 1);
