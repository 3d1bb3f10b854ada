import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Contract suites that start sandboxed runtimes (bubblewrap hosts, Lambda stand-in environments):
 * three quarters of the contract tier's time, so they run in `npm test` with the main project only.
 */
const SANDBOXED_CONTRACTS = ['test/contract/compute.test.ts', 'test/contract/mcp-runtime.test.ts'];
const UNIT_FILES = ['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts'];

export default defineConfig({
  test: {
    // Integration tests each start a real local platform (dynalite + s3rver); two cores, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    // Guards against a hang, not checks of speed: a loaded 2-core machine runs three to four times
    // slower than an idle one, and a test that passes there must not fail on time alone.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    execArgv: ['--openssl-legacy-provider'],
    // Transformed modules kept on disk between runs, keyed by each file's content (in
    // node_modules/.experimental-vitest-cache, so `npm ci` clears it): every run transformed the same
    // few hundred TypeScript files again, once per project (decision 0050).
    experimental: { fsModuleCache: true },
    // Versions are pinned in the lock file; the SDK's notice that future releases need Node 22 is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // The framework tier (test/frameworks, real Strands named by STRANDS_PYTHON) is a project of its
    // own, so `npm test` runs it in a pass of its own (counted apart, skipped in one line without
    // the interpreter) and never twice; a path given to vitest still finds its files.
    projects: [
      // Files that start the real local platform. They share a test process (isolate: false): each
      // file imported the platform's modules again (177 s of import in a 1,060 s run, on cores the
      // tests themselves keep busy; decision 0049). A file here stops what it starts and restores
      // what it changes (environment, timers); none uses vi.mock.
      { extends: true, test: { name: 'main', include: ['test/integration/**/*.test.ts', ...SANDBOXED_CONTRACTS], isolate: false } },
      // `npm run test:fast`: the unit tests and the contract suites that start no sandboxed runtime
      // (decision 0036). Their files share a test process (isolate: false): most of their time was
      // each file loading the same modules again (import 35 s of a 59 s run on 2 cores; 10 s shared).
      // A file here restores what it changes (timers, environment) and uses no vi.mock.
      { extends: true, test: { name: 'unit', include: UNIT_FILES, exclude: [...configDefaults.exclude, ...SANDBOXED_CONTRACTS], isolate: false } },
      // The infra tests read one synthesized platform (test/infra/synth-platform.ts: cached under
      // .tmp/synth-cache by the sources' content; the global setup notes that content as the run
      // starts). Their files share a test process (isolate: false), so aws-cdk-lib is loaded and the
      // platform's constructs are made once per process, not once per file: a file here must leave
      // no global state behind (restore what it changes; no vi.mock). The timeouts are hang guards:
      // a synth takes 10 to 60 s on a loaded machine, and a cold cache makes the first test wait for it.
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          isolate: false,
          globalSetup: ['test/support/synth-global-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
        },
      },
      // Each file starts a platform and a runtime that imports Strands (seconds on a busy machine).
      { extends: true, test: { name: 'frameworks', include: ['test/frameworks/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
    ],
  },
});
