import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnResource, Stack, Stage, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { inject } from 'vitest';
import type { IConstruct } from 'constructs';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import type { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { cdkJsonContext, synthesizePlatform } from '../support/platform-assets.ts';
import { cachedDirectory, platformSynthKey } from '../support/synth-cache.ts';

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
  /**
   * The stack's constructs, for logical ids (`logicalIdOf`) and what the stack made (`stack.functions`...).
   * Built on first use from the same sources as the templates, and never synthesized: read the
   * templates from `main`, `segments` and `outdir`.
   */
  readonly stack: PlatformStack;
  readonly main: Template;
  /** The nested stack of each first path segment of the API, keyed by segment. */
  readonly segments: ReadonlyMap<string, Template>;
  /** Logical id of each segment's AWS::CloudFormation::Stack resource in the main template. */
  readonly segmentStackIds: ReadonlyMap<string, string>;
  /** The cloud assembly directory: every template file, as `cdk synth` writes them. Shared: read it, never write. */
  readonly outdir: string;
  /** Where the synth wrote the generated function entries (`<area>.entry.ts`, ...). */
  readonly entriesDir: string;
}

/** Shared by every test process: one synth per content of the sources (test/support/synth-cache.ts). */
const SYNTH_CACHE_DIR = join(REPO_ROOT, '.tmp', 'synth-cache');

const STACK_NAMES = { stackName: TEST_STACK, stage: TEST_STAGE } as const;

/** What the synth records beside the cloud assembly, so a reader needs no construct. */
interface SynthRecord {
  readonly templateFile: string;
  readonly segments: { readonly segment: string; readonly templateFile: string; readonly stackId: string }[];
  /** Logical ids of the main stack's constructed resources (before synthesis), to check a rebuilt stack against. */
  readonly constructedIds: string[];
}

/** Logical ids of the CloudFormation resources constructed directly in `stack` (not in its nested stacks). */
function constructedIds(stack: PlatformStack): string[] {
  return stack.node
    .findAll()
    .filter((c): c is CfnResource => CfnResource.isCfnResource(c) && Stack.of(c) === stack)
    .map((c) => stack.getLogicalId(c))
    .sort();
}

/** The platform's constructs as `synthesizePlatform` makes them (entries in `entriesDir`), in an app that is never synthesized. */
function constructPlatform(entriesDir: string): PlatformStack {
  // Constructing stages assets (copies of the runtimes' files) in the app's directory: a scratch one, removed when the process ends.
  const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-constructs-'));
  process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
  return synthesizePlatform(outdir, { bundling: false, ...STACK_NAMES, entriesDir, synthesize: false });
}

/** Synthesizes the platform into `dir`: the cloud assembly in cdk.out/, the entries in entries/, and synth.json. */
function synthesizeInto(dir: string): PlatformStack {
  const stack = synthesizePlatform(join(dir, 'cdk.out'), { bundling: false, ...STACK_NAMES, entriesDir: join(dir, 'entries'), synthesize: false });
  // Taken before the synth, to compare like with like: a rebuilt stack is never synthesized.
  const ids = constructedIds(stack);
  Stage.of(stack)!.synth();
  const record: SynthRecord = {
    templateFile: stack.templateFile,
    segments: [...stack.api.segmentStacks].map(([segment, nested]) => {
      const resource = nested.nestedStackResource;
      if (resource === undefined) throw new Error(`Segment ${segment} has no nested stack resource`);
      return { segment, templateFile: nested.templateFile, stackId: stack.getLogicalId(resource) };
    }),
    constructedIds: ids,
  };
  writeFileSync(join(dir, 'synth.json'), JSON.stringify(record));
  return stack;
}

/** A synth of this process alone, when the sources changed during the run (as every synth was before the cache). */
function uncachedSynth(): { dir: string; stack: PlatformStack } {
  const dir = scratchEntriesDir('synth-uncached-');
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return { dir, stack: synthesizeInto(dir) };
}

let cached: SynthesizedPlatform | undefined;

/**
 * The platform synthesized with the feature flags of cdk.json, so the tests see what `cdk synth`
 * produces, and with bundling off (`aws:cdk:bundling-stacks: []`): esbuild would cost seconds per
 * function and the templates do not depend on the bundle. One synth serves every infra test of
 * every test process while the sources are unchanged (before, each test file synthesized again,
 * 10 to 30 s): the assembly is kept under .tmp/synth-cache/<hash of the sources' bytes>/
 * (PLATFORM_SYNTH_INPUTS) and read from there. The constructs (`stack`) are made again, once per
 * test process, when a test asks for them, and checked against the ones the template came from.
 */
export function synthPlatform(): SynthesizedPlatform {
  if (cached !== undefined) return cached;
  const key = platformSynthKey();
  // Set by the infra project's global setup as the run started; absent when this module runs elsewhere.
  const atStart = inject('platformSynthKey') as string | undefined;
  const shared =
    atStart === undefined || key === atStart
      ? cachedDirectory(
          SYNTH_CACHE_DIR,
          key,
          (dir) => void synthesizeInto(dir),
          () => platformSynthKey() === key,
        )
      : undefined;
  const { dir, stack: synthesized } = shared !== undefined ? { dir: shared, stack: undefined } : uncachedSynth();
  const record = JSON.parse(readFileSync(join(dir, 'synth.json'), 'utf8')) as SynthRecord;
  const outdir = join(dir, 'cdk.out');
  const entriesDir = join(dir, 'entries');
  const templateAt = (file: string) => Template.fromJSON(JSON.parse(readFileSync(join(outdir, file), 'utf8')) as Record<string, unknown>);
  let stack = synthesized;
  cached = {
    get stack() {
      if (stack !== undefined) return stack;
      const constructed = constructPlatform(entriesDir);
      if (JSON.stringify(constructedIds(constructed)) !== JSON.stringify(record.constructedIds)) {
        throw new Error(`The platform's sources changed during the test run (its constructs no longer match ${dir}): run the tests again`);
      }
      return (stack = constructed);
    },
    main: templateAt(record.templateFile),
    segments: new Map(record.segments.map((s) => [s.segment, templateAt(s.templateFile)])),
    segmentStackIds: new Map(record.segments.map((s) => [s.segment, s.stackId])),
    outdir,
    entriesDir,
  };
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

/**
 * The platform's own function resources in one template, by what they are: Node.js functions that
 * are not the tenant-isolated runtimes (which read no configuration) nor the run-token rotation
 * function (which talks only to Secrets Manager and carries no settings).
 */
export function configuredFunctionsOf(template: TemplateJson): NonNullable<TemplateJson['Resources'][string]>[] {
  return Object.entries(template.Resources)
    .filter(
      ([id, r]) =>
        r.Type === 'AWS::Lambda::Function' &&
        r.Properties?.['Runtime'] === 'nodejs22.x' &&
        r.Properties['TenancyConfig'] === undefined &&
        !id.startsWith('RunTokenRotationFunction'),
    )
    .map(([, r]) => r);
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
