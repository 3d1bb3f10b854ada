import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { PlatformStack, type PlatformStackProps } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { configuredFunctionsOf, scratchEntriesDir, withScratchOutdir, type TemplateJson } from './synth-platform.ts';

/** The deploy option `agentModelHosts` reaches every function and the voice service as AGENT_MODEL_HOSTS. */

const scratchEntries = scratchEntriesDir('model-hosts-entries-');
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

const ROUTES: readonly RouteSpec[] = [
  {
    id: 'demo.get',
    method: 'GET',
    path: '/demo',
    host: 'base',
    area: 'demo',
    handler: 'get',
    auth: 'public',
    callers: 'role',
    mode: 'buffered',
    style: 'B',
    timeoutSec: 29,
    maxBodyBytes: 1024,
  },
];

function synthWith(props: Partial<PlatformStackProps>): TemplateJson {
  return withScratchOutdir((outdir) => {
    const app = new App({ outdir, analyticsReporting: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new PlatformStack(app, 'model-hosts-test', { stage: 'test', version: '0', routes: ROUTES, entriesDir: scratchEntries, ...props });
    return Template.fromStack(stack).toJSON() as TemplateJson;
  });
}

/** AGENT_MODEL_HOSTS of each platform function (not the tenant-isolated runtimes) and each service container. */
function settingEverywhere(template: TemplateJson): unknown[] {
  const resources = Object.values(template.Resources);
  const functions = configuredFunctionsOf(template).map((r) => r.Properties?.['Environment'].Variables.AGENT_MODEL_HOSTS);
  const containers = resources
    .filter((r) => r.Type === 'AWS::ECS::TaskDefinition')
    .map(
      (r) =>
        (r.Properties?.['ContainerDefinitions'][0]['Environment'] as { Name: string; Value: unknown }[]).find((v) => v.Name === 'AGENT_MODEL_HOSTS')?.Value,
    );
  expect(functions.length).toBeGreaterThan(0);
  expect(containers.length).toBeGreaterThan(0);
  return [...functions, ...containers];
}

describe('agentModelHosts', () => {
  it('reaches every platform function and the voice service', () => {
    // Act
    const template = synthWith({ agentModelHosts: ['*.amazonaws.com', ' 10.0.0.5:11434 '] });
    // Assess
    expect(new Set(settingEverywhere(template))).toEqual(new Set(['*.amazonaws.com,10.0.0.5:11434']));
  });

  it('is left to the functions’ default when not given', () => {
    // Act
    const template = synthWith({});
    // Assess
    expect(new Set(settingEverywhere(template))).toEqual(new Set([undefined]));
  });

  it('refuses at synth an entry the functions would refuse at start', () => {
    // Act / Assess
    expect(() => synthWith({ agentModelHosts: ['*.amazonaws.com', '192.168.1.20'] })).toThrow(
      /Invalid agentModelHosts: '192.168.1.20' is an address without a port/,
    );
  });
});
