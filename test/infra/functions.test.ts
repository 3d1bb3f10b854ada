import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { areas } from '../../lib/manifest/areas.ts';
import { describe, expect, it } from 'vitest';
import type { PlatformEnvironmentName } from '../../lib/cloud/platform-function.ts';
import { AGENT_RUNS_SERVER } from '../../lib/cloud/function-entries.ts';
import { AGENT_RUN_TIMEOUT_SEC } from '../../functions/agents/agent-runs.ts';
import { areaNamed, handlerModulePath, resourcesOf, routes, routesByArea, tables } from '../../lib/manifest/index.ts';
import { allTemplates, json, logicalIdOf, platformFunctions, synthPlatform, TEST_STAGE } from './synth-platform.ts';

const bufferedAreas = routesByArea(routes.filter((r) => r.mode === 'buffered'));
const streamingHosts = new Set(routes.filter((r) => r.mode === 'streaming').map((r) => r.host));

/** Every variable the functions need from functions/core/config.ts (the type is checked against `Config`). */
const REQUIRED_ENV: readonly PlatformEnvironmentName[] = [
  'STAGE',
  'TABLE_PREFIX',
  'BUCKET_PREFIX',
  'COGNITO_USER_POOL_ID',
  'COGNITO_CLIENT_ID',
  'KEYS_KMS_KEY_ID',
  'LOG_LEVEL',
  'PLATFORM_VERSION',
  'USAGE_LOG_RETENTION_DAYS',
];

/** The area function's resource and the statements of its role's policy. */
function areaFunction(area: string) {
  const platform = synthPlatform();
  const fn = platform.stack.functions.areas.get(area);
  if (fn === undefined) throw new Error(`No function for area ${area}`);
  const resources = json(platform.main).Resources;
  const role = logicalIdOf(platform, fn.function.role!);
  const statements = Object.values(resources)
    // The inline policy, and the overflow managed policy CDK adds once a role's statements pass the inline size limit (platform-tools: H, issue 35).
    .filter(
      (r) =>
        (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') &&
        ((r.Properties?.['Roles'] as unknown[] | undefined) ?? []).some((ref) => JSON.stringify(ref) === JSON.stringify({ Ref: role })),
    )
    .flatMap((p) => p.Properties?.['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown }[]);
  return { props: resources[logicalIdOf(platform, fn.function)]!.Properties!, statements };
}

describe('functions', () => {
  it('has one function per area, per streaming host and per area with storage events or queues, the fallback and the two runtimes (Python, MCP), all in the main stack', () => {
    // Prepare
    const platform = synthPlatform();
    const { storageEvents, queueConsumers } = platform.stack.functions;
    // CDK's one handler of the S3 notification custom resource, there once any bucket notifies.
    const notificationHandlers = storageEvents.size > 0 ? 1 : 0;
    // CDK's handlers of the services' custom resources (the CloudFront prefix list lookup, the VPC's default security group lockdown).
    const serviceHandlers = platform.stack.services !== undefined ? 2 : 0;
    // CDK's handlers of the asset hosts' custom resources (the bucket deployment, the bucket's auto-delete).
    const assetHandlers = platform.stack.assetDistributions.size > 0 ? 2 : 0;
    // One function per area with static schedules, and the run-token secret's rotation function when it rotates.
    const scheduleFunctions = platform.stack.functions.schedules.size;
    const rotation = platform.stack.runTokenRotation !== undefined ? 1 : 0;

    // Act
    const perTemplate = allTemplates(platform).map(({ name, template }) => [name, Object.keys(template.findResources('AWS::Lambda::Function')).length]);

    // Assess
    expect([...platform.stack.functions.areas.keys()].sort()).toEqual([...bufferedAreas.keys()].sort());
    expect([...platform.stack.functions.streams.keys()].sort()).toEqual([...streamingHosts].sort());
    expect(perTemplate).toEqual(
      allTemplates(platform).map(({ name }) => [
        name,
        name === 'main'
          ? bufferedAreas.size +
            streamingHosts.size +
            3 +
            storageEvents.size +
            queueConsumers.size +
            notificationHandlers +
            serviceHandlers +
            assetHandlers +
            scheduleFunctions +
            rotation
          : 0,
      ]),
    );
  });

  it('runs every platform function on Node 22, arm64, with tracing, a month of logs and the platform configuration', () => {
    // Prepare
    const platform = synthPlatform();
    const resources = json(platform.main).Resources;
    const functions = platformFunctions(platform);

    // Act
    const logRetention = functions.map(([, f]) => resources[f.Properties?.['LoggingConfig'].LogGroup.Ref]?.Properties?.['RetentionInDays']);

    // Assess
    expect(functions).toHaveLength(bufferedAreas.size + streamingHosts.size + 1);
    for (const [logicalId, f] of functions) {
      expect(f.Properties, logicalId).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
        MemorySize: 512,
        Environment: {
          Variables: {
            STAGE: TEST_STAGE,
            LOG_LEVEL: 'info',
            PLATFORM_VERSION: '0.0.0-test',
            USAGE_LOG_RETENTION_DAYS: '30',
            NODE_OPTIONS: '--enable-source-maps',
          },
        },
      });
      expect(Object.keys(f.Properties?.['Environment'].Variables)).toEqual(expect.arrayContaining([...REQUIRED_ENV]));
    }
    expect(logRetention).toEqual(functions.map(() => 30));
  });

  it.each([...bufferedAreas].map(([area, list]) => [area, list] as const))('gives area %s its slowest route plus a margin', (area, list) => {
    // Prepare
    // The agents function also serves agent runs invoked by cron and channels, which have no route.
    const expected = Math.max(...list.map((r) => r.timeoutSec), ...(area === AGENT_RUNS_SERVER.area ? [AGENT_RUN_TIMEOUT_SEC] : [])) + 3;

    // Act
    const { props } = areaFunction(area);

    // Assess
    expect(props['Timeout']).toBe(expected);
  });

  it.each([...bufferedAreas.keys()])('grants area %s read and write on exactly the tables and buckets its module declares', (area) => {
    // Prepare: what the area's module declares (its ports' resources, and the kernel's when a route authenticates)
    const platform = synthPlatform();
    const expected = resourcesOf([areaNamed(area)]);
    const { statements } = areaFunction(area);
    const tableIds = new Map([...platform.stack.data.tables].map(([name, table]) => [logicalIdOf(platform, table), name]));
    const bucketIds = new Map([...platform.stack.data.buckets].map(([name, bucket]) => [logicalIdOf(platform, bucket), name]));

    // Act: every table and bucket any statement of the role names
    const named = (ids: Map<string, string>) =>
      [
        ...new Set(
          statements.flatMap((s) =>
            [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => ids.get(m[1]!)).filter((n): n is string => n !== undefined),
          ),
        ),
      ].sort();
    const dynamo = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    const indexArns = dynamo.flatMap((s) => [s.Resource].flat()).filter((r) => JSON.stringify(r).includes('/index/*'));

    // Assess
    expect(named(tableIds)).toEqual([...expected.tables].sort());
    expect(named(bucketIds)).toEqual([...expected.buckets].sort());
    expect(indexArns).toHaveLength(tables.filter((t) => expected.tables.has(t.name as never) && t.indexes !== undefined).length);
  });

  it('gives the health and discovery function no store, key or secret at all', () => {
    // Prepare
    const { statements } = areaFunction('discovery');

    // Act
    const actions = statements.flatMap((s) => [s.Action].flat());

    // Assess: X-Ray only.
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((a) => !a.startsWith('xray:'))).toEqual([]);
  });

  it.each([...bufferedAreas.keys()])('lets area %s use the secrets key only as far as its ports need', (area) => {
    // Prepare
    const { statements } = areaFunction(area);
    const wanted = { seal: ['kms:Decrypt', 'kms:GenerateDataKey'], open: ['kms:Decrypt'] };
    const declared = resourcesOf([areaNamed(area)]).secretsKey;

    // Act
    const kmsActions = statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('kms:'));

    // Assess
    expect(kmsActions.sort()).toEqual(declared === null ? [] : wanted[declared]);
  });

  it('gives the fallback no access to the stores', () => {
    // Prepare
    const platform = synthPlatform();
    const role = logicalIdOf(platform, platform.stack.functions.fallback.function.role!);

    // Act
    const policies = Object.values(platform.main.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p['Properties'].Roles).includes(`"${role}"`));
    const actions = policies.flatMap((p) => p['Properties'].PolicyDocument.Statement.flatMap((s: { Action: string | string[] }) => [s.Action].flat()));

    // Assess: X-Ray only.
    expect(actions.every((a: string) => a.startsWith('xray:'))).toBe(true);
  });

  it.each([...bufferedAreas].map(([area, list]) => [area, list] as const))(
    'builds area %s from an entry that binds each of its buffered routes',
    async (area, list) => {
      // Prepare
      const entry = join(synthPlatform().entriesDir, `${area}.entry.ts`);

      // Act: importing runs areaHandler, which throws when a route of the area has no handler.
      const mod = (await import(entry)) as { handler: unknown };
      const source = readFileSync(entry, 'utf8');

      // Assess
      expect(typeof mod.handler).toBe('function');
      for (const r of list) expect(source).toContain(`/${handlerModulePath(r)}"`);
    },
  );

  it('builds the fallback from an entry exporting fallbackHandler', async () => {
    // Prepare
    const { entriesDir } = synthPlatform();

    // Act
    const mod = (await import(join(entriesDir, 'fallback.entry.ts'))) as { handler: (event: unknown) => Promise<{ statusCode: number }> };
    const response = await mod.handler({
      httpMethod: 'GET',
      resource: '/{proxy+}',
      path: '/no-such-thing',
      pathParameters: { proxy: 'no-such-thing' },
      headers: {},
      requestContext: { requestId: 'r-1' },
    });

    // Assess
    expect(response.statusCode).toBe(404);
  });

  it('synthesizes without bundling in tests', () => {
    // Prepare
    const { outdir } = synthPlatform();
    const assetNames = new Set(areas.flatMap((area) => area.assets.map((asset) => asset.name)));

    // Act: bundled assets are staged as asset.<hash> directories next to the templates. The services'
    // image contexts are staged at synth by design (service-image.ts), and CDK's own custom resource
    // handlers (the bucket deployment's in Python, its AWS CLI layer as a zip) are copied as they
    // ship: none is a platform function's bundle.
    const assets = readdirSync(outdir)
      .filter((name) => name.startsWith('asset.') && !name.endsWith('.image') && !name.endsWith('.zip'))
      .filter((name) => !readdirSync(join(outdir, name)).every((file) => ['index.js', '__entrypoint__.js', 'index.py'].includes(file)))
      // The widget's files, staged at their paths for the CDN host's bucket (asset-distribution.ts).
      .filter((name) => !readdirSync(join(outdir, name)).every((file) => assetNames.has(file) || /^v[0-9.]+$/.test(file)))
      // The console's files for the same bucket (console-deployment.ts): its page, and its hashed scripts and styles.
      .filter((name) => !readdirSync(join(outdir, name)).every((file) => file === 'console' || /^(main|chunk)-[A-Z0-9]+\.(js|css)$/.test(file)));

    // Assess
    expect(assets).toEqual([]);
  });

  it('passes the Cognito ids and the secrets key to every platform function', () => {
    // Prepare
    const platform = synthPlatform();
    const pool = logicalIdOf(platform, platform.stack.identity.userPool);
    const client = logicalIdOf(platform, platform.stack.identity.client);
    const key = logicalIdOf(platform, platform.stack.data.secretsKey);

    // Act
    const variables = platformFunctions(platform).map(([, f]) => f.Properties?.['Environment'].Variables);

    // Assess
    for (const v of variables) {
      expect(v.COGNITO_USER_POOL_ID).toEqual({ Ref: pool });
      expect(v.COGNITO_CLIENT_ID).toEqual({ Ref: client });
      expect(v.KEYS_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
    }
  });
});
