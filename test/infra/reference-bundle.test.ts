/**
 * The reference function as the cloud builds it: the real esbuild bundle of its generated entry,
 * with its runtime files copied in by the bundling hooks, then its handler invoked with API Gateway
 * events. The other infra tests synthesize with bundling off; this one needs the bundle, because
 * the document depends on esbuild having bundled every handler module and the page on the viewer's
 * files being in the bundle.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Duration, Stack } from 'aws-cdk-lib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { restEvent } from '../support/rest-event.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, writeAreaEntry } from '../../lib/cloud/function-entries.ts';
import { PlatformFunction } from '../../lib/cloud/platform-function.ts';
import { areaNamed, areas } from '../../lib/manifest/areas.ts';
import { modulesOfFunction } from '../../lib/manifest/ports.ts';
import { routes } from '../../lib/manifest/routes.ts';
import { cdkJsonContext } from './synth-platform.ts';

const AREA_ENV = { STAGE: 'test', TABLE_PREFIX: 'unit-', BUCKET_PREFIX: 'unit-', LOG_LEVEL: 'silent', AWS_REGION: 'us-east-1', PLATFORM_VERSION: '9.9.9' };

function refEvent(resource: string, path: string, pathParameters: Record<string, string> | null = null) {
  return restEvent({ resource, path, pathParameters, stage: 'prod' });
}

describe('the reference function bundled for the cloud', () => {
  // Inside the project: the bundle imports the AWS SDK, which Lambda provides and this machine has
  // in the project's node_modules only.
  const workDir = mkdtempSync(join(REPO_ROOT, '.tmp', 'reference-bundle-'));
  const saved = { ...process.env };
  let bundleDir: string;
  let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

  beforeAll(async () => {
    const area = areaNamed('reference');
    const app = new App({ outdir: join(workDir, 'cdk.out'), analyticsReporting: false, context: cdkJsonContext() });
    const stack = new Stack(app, 'ReferenceBundle');
    new PlatformFunction(stack, 'Reference', {
      entry: writeAreaEntry(
        'reference',
        routes.filter((r) => r.area === 'reference'),
        modulesOfFunction([area], areas),
        join(workDir, 'entries'),
      ),
      timeout: Duration.seconds(30),
      environment: {
        STAGE: 'test',
        TABLE_PREFIX: 'unit-',
        BUCKET_PREFIX: 'unit-',
        LOG_LEVEL: 'silent',
        PLATFORM_VERSION: '9.9.9',
        COGNITO_USER_POOL_ID: 'unused',
        COGNITO_CLIENT_ID: 'unused',
        KEYS_KMS_KEY_ID: 'unused',
        USAGE_LOG_RETENTION_DAYS: '30',
      },
      runtimeFiles: area.runtimeFiles,
    });
    app.synth();
    const assets = readdirSync(join(workDir, 'cdk.out')).filter((name) => name.startsWith('asset.') && existsSync(join(workDir, 'cdk.out', name, 'index.mjs')));
    expect(assets).toHaveLength(1);
    bundleDir = join(workDir, 'cdk.out', assets[0]!);
    // Only the function's own configuration, as in Lambda (vitest sets BASE_URL to '/' for Vite).
    for (const name of ['BASE_URL', 'STREAM_URL', 'MCP_URL', 'VOICE_URL', 'CDN_URL', 'SITE_URL', 'CODE_URL', 'DYNAMODB_ENDPOINT', 'S3_ENDPOINT'])
      delete process.env[name];
    Object.assign(process.env, AREA_ENV);
    ({ handler } = (await import(pathToFileURL(join(bundleDir, 'index.mjs')).href)) as { handler: typeof handler });
  });

  afterAll(() => {
    process.env = saved;
    rmSync(workDir, { recursive: true, force: true });
  });

  it('holds the viewer files beside the bundle, at the paths the code looks them up by', () => {
    // Assess
    for (const file of areaNamed('reference').runtimeFiles) expect(existsSync(join(bundleDir, file)), file).toBe(true);
  });

  it('answers the OpenAPI document from its own bundle, every handler module included', async () => {
    // Act
    const response = await handler(refEvent('/openapi.json', '/openapi.json'));
    // Assess
    expect(response.statusCode).toBe(200);
    const document = JSON.parse(response.body);
    expect(document.info.version).toBe('9.9.9');
    expect(document.servers[0].url).toBe('https://api.example.test');
    const listed = Object.values(document.paths).flatMap((item: any) =>
      Object.values(item).flatMap((op: any) => op['x-platform-routes'].map((r: any) => r.id)),
    );
    expect(new Set(listed)).toEqual(new Set(routes.map((r) => r.id)));
    expect(document.paths['/agent/create'].post.requestBody.content['application/json'].schema.required).toContain('agentName');
  });

  it('answers the page and the viewer files', async () => {
    // Act
    const page = await handler(refEvent('/docs', '/docs'));
    const css = await handler(refEvent('/docs/{asset}', '/docs/swagger-ui.css', { asset: 'swagger-ui.css' }));
    // Assess
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('docs/swagger-ui-bundle.js');
    expect(css.statusCode).toBe(200);
    expect(css.headers?.['content-type']).toMatch(/^text\/css/);
    expect(css.body.length).toBeGreaterThan(100_000);
  });
});
