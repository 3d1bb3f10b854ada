/**
 * The cloud composition root with only what a function of one area receives: the health and
 * discovery function has no run-token secret, no runtime and no MCP runtime variable (its module
 * declares no such port), and must still answer. Adapters are built on first use, so only a
 * function that needs a port can fail for its missing configuration; and the entry passes only
 * the adapters its areas need, so one that left out a needed adapter fails at start.
 */
import { restEvent } from '../support/rest-event.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AREA_ENV = { STAGE: 'test', TABLE_PREFIX: 'unit-', BUCKET_PREFIX: 'unit-', LOG_LEVEL: 'silent', AWS_REGION: 'us-east-1' };

describe("a cloud function given only its own area's configuration", () => {
  const saved = { ...process.env };
  beforeAll(() => {
    for (const name of [
      'BASE_URL',
      'STREAM_URL',
      'MCP_URL',
      'VOICE_URL',
      'CDN_URL',
      'SITE_URL',
      'CODE_URL',
      'RUNTIME_FUNCTION_NAME',
      'MCP_RUNTIME_FUNCTION_NAME',
      'RUN_TOKEN_SECRET_ARN',
      'KEYS_KMS_KEY_ID',
      'DYNAMODB_ENDPOINT',
      'S3_ENDPOINT',
    ])
      delete process.env[name];
    Object.assign(process.env, AREA_ENV);
  });
  afterAll(() => {
    process.env = saved;
  });

  it('serves health and discovery without the secrets and runtimes other areas need', async () => {
    // Prepare: the entry the stack generates for the platform area
    const { areaHandler } = await import('../../functions/cloud.ts');
    const { discoveryArea } = await import('../../functions/discovery/discovery.module.ts');
    const { modulesOfFunction } = await import('../../lib/manifest/ports.ts');
    const { default: health } = await import('../../functions/discovery/handlers/get-health.handler.ts');
    const { default: discovery } = await import('../../functions/discovery/handlers/get-discovery.handler.ts');
    const handler = areaHandler(
      'discovery',
      modulesOfFunction([discoveryArea]),
      {},
      {
        'discovery.get-health': health,
        'discovery.get-discovery': discovery,
      },
    );

    // Act
    const answer = await handler(restEvent({ resource: '/health' }));
    const found = await handler(restEvent({ resource: '/.well-known/platform.json' }));

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(found.statusCode).toBe(200);
  });

  it('fails at start, naming the port, when its area needs an adapter the entry does not pass', async () => {
    // Prepare: an area running user code, wired with every adapter but the runtime's.
    const { areaHandler } = await import('../../functions/cloud.ts');
    const { defineArea } = await import('../../lib/manifest/define.ts');
    const { kmsSecretBox } = await import('../../functions/adapters/secret-box/aws.ts');
    const runner = defineArea({ name: 'runner', uses: ['compute', 'secretBox'] });

    // Act
    const build = (adapters: Parameters<typeof areaHandler>[2]) => () => areaHandler('runner', [runner], adapters, {});

    // Assess: construction is the function's start (the entry's module scope), before any request.
    expect(build({ secretBox: kmsSecretBox })).toThrow(/runner area uses the compute port, whose cloud adapter this function's entry does not pass/);
    expect(build({ secretBox: kmsSecretBox, compute: () => ({}) as never })).not.toThrow();
  });
});
