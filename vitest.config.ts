import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests each start a real local platform (dynalite + s3rver); two cores, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    execArgv: ['--openssl-legacy-provider'],
    // Versions are pinned in the lock file; the SDK's notice that future releases need Node 22 is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
