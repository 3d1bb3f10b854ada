import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration tests each start a real local platform (dynalite + s3rver); two cores, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    execArgv: ['--openssl-legacy-provider'],
    // Versions are pinned in the lock file; the SDK's notice that future releases need Node 22 is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // The framework tier (test/frameworks, real Strands named by STRANDS_PYTHON) is a project of its
    // own, so `npm test` runs it in a pass of its own (counted apart, skipped in one line without
    // the interpreter) and never twice; a path given to vitest still finds its files.
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/frameworks/**'] } },
      // Each file starts a platform and a runtime that imports Strands (seconds on a busy machine).
      { extends: true, test: { name: 'frameworks', include: ['test/frameworks/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
    ],
  },
});
