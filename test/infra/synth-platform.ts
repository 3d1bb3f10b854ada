import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, vi } from 'vitest';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import type { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { cdkJsonContext, synthesizePlatform } from '../support/platform-assets.ts';

export { cdkJsonContext };

export const TEST_STACK = 'agent-platform-test';
export const TEST_STAGE = 'test';

/** A CloudFormation template as JSON, for the checks the assertions API has no matcher for. */
export interface TemplateJson {
  readonly Resources: Record<
    string,
    {
      Type: string;
      Properties?: Record<string, any>;
      DependsOn?: string[];
      DeletionPolicy?: string;
      UpdateReplacePolicy?: string;
      Metadata?: Record<string, unknown>;
    }
  >;
  readonly Parameters?: Record<string, unknown>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

export interface SynthesizedPlatform {
  readonly stack: PlatformStack;
  readonly main: Template;
  /** The nested stack of each first path segment of the API, keyed by segment. */
  readonly segments: ReadonlyMap<string, Template>;
  /** Logical id of each segment's AWS::CloudFormation::Stack resource in the main template. */
  readonly segmentStackIds: ReadonlyMap<string, string>;
  /** The cloud assembly directory: every template file, as `cdk synth` writes them. */
  readonly outdir: string;
}

// A synth takes 5 to 20 s on two idle cores and can pass the suite's 30 s default on a loaded
// machine; every infra test file imports this module, so their tests get more room.
vi.setConfig({ testTimeout: 120_000 });

let cached: SynthesizedPlatform | undefined;

// Imported at the top of a test file, so this runs once that file's tests are done.
afterAll(() => {
  if (cached !== undefined) rmSync(cached.outdir, { recursive: true, force: true });
});

/**
 * Synthesizes the platform once per test file, with the feature flags of cdk.json so the tests see
 * what `cdk synth` produces, and with bundling off (`aws:cdk:bundling-stacks: []`): esbuild would
 * cost seconds per function and the templates do not depend on the bundle.
 */
export function synthPlatform(): SynthesizedPlatform {
  if (cached !== undefined) return cached;
  const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-'));
  const stack = synthesizePlatform(outdir, { bundling: false, stackName: TEST_STACK, stage: TEST_STAGE });
  const segments = new Map<string, Template>();
  const segmentStackIds = new Map<string, string>();
  for (const [segment, nested] of stack.api.segmentStacks) {
    segments.set(segment, Template.fromStack(nested));
    const resource = nested.nestedStackResource;
    if (resource === undefined) throw new Error(`Segment ${segment} has no nested stack resource`);
    segmentStackIds.set(segment, stack.getLogicalId(resource));
  }
  cached = { stack, main: Template.fromStack(stack), segments, segmentStackIds, outdir };
  return cached;
}

export function json(template: Template): TemplateJson {
  return template.toJSON() as TemplateJson;
}

/** Every template of the platform: the main one first, then each path segment's. */
export function allTemplates(platform: SynthesizedPlatform): { name: string; template: Template }[] {
  return [{ name: 'main', template: platform.main }, ...[...platform.segments].map(([segment, template]) => ({ name: `/${segment}`, template }))];
}

/**
 * The platform's own (Node) functions in the main template, by logical id: every area, every
 * streaming host and the fallback; not the runtime functions that run user code.
 */
export function platformFunctions(platform: SynthesizedPlatform): [string, NonNullable<TemplateJson['Resources'][string]>][] {
  const { functions } = platform.stack;
  const constructs = [...functions.areas.values(), ...[...functions.streams.values()].map((s) => s.function), functions.fallback];
  const resources = json(platform.main).Resources;
  return constructs.map((c) => {
    const id = logicalIdOf(platform, c.function);
    return [id, resources[id]!];
  });
}

/** Every statement of the policies attached to `roleLogicalId` in `template`. */
export function roleStatements(template: TemplateJson, roleLogicalId: string): { Effect: string; Action: string | string[]; Resource: unknown }[] {
  return Object.values(template.Resources)
    .filter(
      (r) =>
        r.Type === 'AWS::IAM::Policy' && (r.Properties?.['Roles'] as unknown[]).some((ref) => JSON.stringify(ref) === JSON.stringify({ Ref: roleLogicalId })),
    )
    .flatMap((p) => p.Properties?.['PolicyDocument'].Statement);
}

/** Logical id in the main template of a construct's CloudFormation resource. */
export function logicalIdOf(platform: SynthesizedPlatform, construct: IConstruct): string {
  return platform.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

/** Runs `build` with a fresh cloud assembly directory and removes it afterwards (CDK would leave one in the temp dir). */
export function withScratchOutdir<T>(build: (outdir: string) => T): T {
  const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-scratch-'));
  try {
    return build(outdir);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** A route for a synthetic stack: the fields a test names, the others defaulted. */
export function syntheticRoute(r: Pick<RouteSpec, 'method' | 'path' | 'area' | 'handler'> & Partial<RouteSpec>): RouteSpec {
  return {
    id: `${r.area}.${r.handler}`,
    host: 'base',
    auth: 'optional',
    callers: 'full',
    mode: 'buffered',
    style: 'B',
    timeoutSec: 29,
    maxBodyBytes: 1024,
    ...r,
  };
}

/** A fresh directory for generated entries under the project's `.tmp/` (esbuild resolves packages from there), made even in a clean checkout. */
export function scratchEntriesDir(prefix: string): string {
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  return mkdtempSync(join(REPO_ROOT, '.tmp', prefix));
}
