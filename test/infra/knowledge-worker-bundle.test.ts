/**
 * The knowledge function as the cloud builds it: the real esbuild bundle of its generated entry,
 * with the text worker bundled beside it (`workers/text-worker.mjs`, from the area's TypeScript
 * runtime file) and the bundle told where to find it. The worker is then started from the bundle
 * and reads a file, as it does in Lambda.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, writeAreaEntry } from '../../lib/cloud/function-entries.ts';
import { PlatformFunction } from '../../lib/cloud/platform-function.ts';
import { areaNamed, areas } from '../../lib/manifest/areas.ts';
import { modulesOfFunction } from '../../lib/manifest/ports.ts';
import { routes } from '../../lib/manifest/routes.ts';
import { cdkJsonContext } from './synth-platform.ts';

describe('the knowledge function bundled for the cloud', () => {
  // Inside the project, where the bundle's packages resolve.
  const workDir = mkdtempSync(join(REPO_ROOT, '.tmp', 'knowledge-bundle-'));
  let bundleDir: string;

  beforeAll(() => {
    const area = areaNamed('knowledge');
    const app = new App({ outdir: join(workDir, 'cdk.out'), analyticsReporting: false, context: cdkJsonContext() });
    new PlatformFunction(new Stack(app, 'KnowledgeBundle'), 'Knowledge', {
      entry: writeAreaEntry(
        'knowledge',
        routes.filter((r) => r.area === 'knowledge'),
        modulesOfFunction([area], areas),
        join(workDir, 'entries'),
      ),
      timeout: Duration.seconds(30),
      // Placeholders: the test bundles and reads the asset, it never runs the function with them.
      environment: {
        STAGE: 'test',
        TABLE_PREFIX: 'test-',
        BUCKET_PREFIX: 'test-',
        PLATFORM_VERSION: '0.0.0',
        LOG_LEVEL: 'info',
        COGNITO_USER_POOL_ID: 'pool',
        COGNITO_CLIENT_ID: 'client',
        KEYS_KMS_KEY_ID: 'key',
        USAGE_LOG_RETENTION_DAYS: '30',
      },
      runtimeFiles: area.runtimeFiles,
    });
    app.synth();
    const assets = readdirSync(join(workDir, 'cdk.out')).filter((name) => name.startsWith('asset.') && existsSync(join(workDir, 'cdk.out', name, 'index.mjs')));
    expect(assets).toHaveLength(1);
    bundleDir = join(workDir, 'cdk.out', assets[0]!);
  });

  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('holds the text worker beside the bundle, which looks for it there', () => {
    // Assess
    expect(existsSync(join(bundleDir, 'workers', 'text-worker.mjs'))).toBe(true);
    expect(existsSync(join(bundleDir, 'functions'))).toBe(false);
    const bundle = readFileSync(join(bundleDir, 'index.mjs'), 'utf8');
    expect(bundle).toContain('"./workers/"');
    expect(bundle).not.toContain('PLATFORM_WORKERS_URL');
  });

  it('reads a file in the bundled worker', async () => {
    // Prepare
    const worker = new Worker(join(bundleDir, 'workers', 'text-worker.mjs'), { workerData: 'knowledge-text-worker' });

    // Act
    const result = await new Promise<{ outcome: string; chunks: string[] }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage({ id: 1, kind: 'html', bytes: new TextEncoder().encode('<p>Rain on <b>Tuesday</b></p>'), limits: { maxPages: 1, maxChars: 1000 } });
    });
    await worker.terminate();

    // Assess
    expect(result).toMatchObject({ outcome: 'read', chunks: ['Rain on Tuesday'] });
  });
});
