import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { integrationTimeoutSec } from '../../lib/cloud/api.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { cdkJsonContext, json, synthPlatform } from './synth-platform.ts';

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** Integration timeout (ms) of every method, by `METHOD path`, across the path stacks' templates. */
function methodTimeouts(segments: Iterable<Template>): Map<string, number> {
  const timeouts = new Map<string, number>();
  for (const template of segments) {
    for (const resource of Object.values(json(template).Resources)) {
      if (resource.Type !== 'AWS::ApiGateway::Method' || resource.Properties?.['HttpMethod'] === 'OPTIONS') continue;
      const key = `${String(resource.Properties?.['HttpMethod'])} ${JSON.stringify(resource.Properties?.['ResourceId'])}`;
      timeouts.set(key, Number(resource.Properties?.['Integration']?.['TimeoutInMillis']));
    }
  }
  return timeouts;
}

function synthWithCeiling(apiIntegrationTimeoutSec: number): PlatformStack {
  const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-timeouts-'));
  outdirs.push(outdir);
  const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new PlatformStack(app, 'agent-platform-timeouts', {
    stackName: 'agent-platform-timeouts',
    stage: 'test',
    version: '0.0.0-test',
    apiIntegrationTimeoutSec,
  });
  app.synth();
  return stack;
}

describe('API Gateway integration timeouts', () => {
  it('waits each route its own timeout plus 2 s, within the ceiling', () => {
    expect(integrationTimeoutSec({ timeoutSec: 29 }, 29)).toBe(29);
    expect(integrationTimeoutSec({ timeoutSec: 10 }, 29)).toBe(12);
    expect(integrationTimeoutSec({ timeoutSec: 120 }, 310)).toBe(122);
    expect(integrationTimeoutSec({ timeoutSec: 300 }, 310)).toBe(302);
  });

  it("stays within API Gateway's default 29 s without a raised quota", () => {
    // Act
    const timeouts = methodTimeouts(synthPlatform().segments.values());
    // Assess
    expect(timeouts.size).toBeGreaterThan(20);
    for (const [method, ms] of timeouts) expect(ms, method).toBeLessThanOrEqual(29_000);
  });

  it('lets long routes wait longer once the ceiling is raised, keeping one Lambda permission per function', () => {
    // Act
    const raised = synthWithCeiling(310);
    const timeouts = [...methodTimeouts([...raised.api.segmentStacks.values()].map((nested) => Template.fromStack(nested))).values()];
    const permissions = Object.values(json(Template.fromStack(raised)).Resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    const defaultPermissions = Object.values(json(synthPlatform().main).Resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    // Assess: buffered chat (300 s), action runs (120 s), ordinary routes (29 s)
    expect(timeouts).toContain(302_000);
    expect(timeouts).toContain(122_000);
    expect(timeouts).toContain(31_000);
    expect(permissions).toHaveLength(defaultPermissions.length);
  });

  it("answers API Gateway's own timeout in the platform's error shape, with CORS", () => {
    const responses = Object.values(json(synthPlatform().main).Resources).filter(
      (r) => r.Type === 'AWS::ApiGateway::GatewayResponse' && r.Properties?.['ResponseType'] === 'INTEGRATION_TIMEOUT',
    );
    expect(responses).toHaveLength(1);
    const properties = responses[0]!.Properties!;
    expect(properties['StatusCode']).toBe('504');
    expect(properties['ResponseParameters']).toMatchObject({ 'gatewayresponse.header.Access-Control-Allow-Origin': "'*'" });
    const body = JSON.parse(String(properties['ResponseTemplates']['application/json']).replaceAll('$context.requestId', 'r-1'));
    expect(body).toEqual({ error: expect.stringContaining('timeout'), code: 'TIMEOUT', requestId: 'r-1', rootRequestId: 'r-1', parentRequestId: null });
  });

  it('refuses a ceiling that is not a whole number of seconds from 1 to 900', () => {
    expect(() => synthWithCeiling(0)).toThrow(/maxIntegrationTimeoutSec/);
    expect(() => synthWithCeiling(901)).toThrow(/maxIntegrationTimeoutSec/);
  });
});
