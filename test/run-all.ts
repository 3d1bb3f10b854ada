/**
 * `npm test`: every TypeScript test (vitest), every Python runtime test (unittest), and the
 * framework tier (test/frameworks: real Strands agents, when STRANDS_PYTHON names an interpreter
 * that has it; otherwise one line says it was skipped), then one closing line `N passed, N failed`
 * over all. Exit status is non-zero if any suite failed. With arguments (vitest's: files, filters)
 * or `--typescript`, vitest alone; `--frameworks` (npm run test:frameworks), the tier alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;
const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });
// One report per run, so a run started by a test of this runner leaves the outer run's alone.
const vitestReport = join(tmp, `vitest-report-${process.pid}.json`);
rmSync(vitestReport, { force: true });

/**
 * Colour for a terminal only. Vitest's colours (tinyrainbow) do not look at whether stdout is a
 * terminal, so a piped or logged run (CI) was full of escape codes; NO_COLOR turns them off there.
 * NO_COLOR or FORCE_COLOR set by the caller wins either way.
 */
const childEnv: NodeJS.ProcessEnv =
  process.stdout.isTTY || 'NO_COLOR' in process.env || 'FORCE_COLOR' in process.env ? process.env : { ...process.env, NO_COLOR: '1' };

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  ok: boolean;
}

function runVitest(extraArgs: readonly string[]): Tally {
  const result = spawnSync(
    process.execPath,
    [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestReport}`, ...extraArgs],
    {
      cwd: root,
      stdio: 'inherit',
      env: childEnv,
    },
  );
  try {
    const text = readFileSync(vitestReport, 'utf8');
    rmSync(vitestReport, { force: true });
    const report = JSON.parse(text) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
    };
    return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests, ok: result.status === 0 };
  } catch {
    // No report means vitest itself failed (e.g. a file did not compile): count it as one failure.
    return { passed: 0, failed: 1, skipped: 0, ok: false };
  }
}

function runPython(interpreter: string): Tally {
  const result = spawnSync(interpreter, ['-m', 'unittest', 'discover', '-s', 'python-runtime', '-p', 'test_*.py', '-t', 'python-runtime'], {
    cwd: root,
    encoding: 'utf8',
    env: childEnv,
  });
  if (result.error) {
    console.error(`${interpreter} could not be run: ${result.error.message}`);
    return { passed: 0, failed: 1, skipped: 0, ok: false };
  }
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  const output = result.stderr + result.stdout;
  const ran = Number(/Ran (\d+) tests?/.exec(output)?.[1] ?? 0);
  const count = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(output)?.[1] ?? 0);
  const failed = count('failures') + count('errors') + count('unexpected successes');
  const skipped = count('skipped') + count('expected failures');
  // unittest exits 5 when it found no tests (3.12+): that is not a failure of the suite.
  const ok = result.status === 0 || (result.status === 5 && ran === 0);
  return { passed: Math.max(0, ran - failed - skipped), failed: ok ? failed : Math.max(failed, 1), skipped, ok };
}

// `--typescript` (npm run test:ts): vitest only, with the same plain output when piped.
const typescriptOnly = process.argv.includes('--typescript');
const frameworksOnly = process.argv.includes('--frameworks');
const args = process.argv.slice(2).filter((arg) => arg !== '--typescript' && arg !== '--frameworks');
const whole = args.length === 0 && !typescriptOnly && !frameworksOnly;

/** The framework tier as its own vitest project (vitest.config.ts), or why it cannot run here. */
function runFrameworkTier(): Tally | null {
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
  const tier = runFrameworkTier();
  if (tier === null) process.exit(0);
  console.log(`${tier.passed} passed, ${tier.failed} failed${tier.skipped > 0 ? `, ${tier.skipped} skipped` : ''}`);
  process.exit(tier.ok && tier.failed === 0 ? 0 : 1);
}

// The whole suite is long, and silent between files for a while: say so up front (CI's figure).
if (whole) console.log('Running every test: about 5 minutes on 2 cores (vitest, then the Python suite, then the framework tier).\n');
// Without arguments the tier's files wait for their own pass; given files or filters, vitest finds them wherever they are.
const ts = runVitest(args.length === 0 ? ['--project', 'main'] : args);
// The runtime supports several Python versions; PYTHON_INTERPRETERS (comma-separated) runs its suite under each.
const interpreters = (process.env['PYTHON_INTERPRETERS'] ?? 'python3')
  .split(',')
  .map((i) => i.trim())
  .filter(Boolean);
const pyRuns = whole ? interpreters.map((interpreter) => ({ interpreter, tally: runPython(interpreter) })) : [];
const tier = whole ? runFrameworkTier() : null;
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
