import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { CFN_LINT_MISSING, cfnLint, HAS_CFN_LINT } from '../support/cfn-lint.ts';

import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { allTemplates, synthPlatform, withScratchOutdir, scratchEntriesDir } from './synth-platform.ts';

/** CloudFormation's hard limit of resources per stack (nested stacks count separately). */
const MAX_RESOURCES = 500;

/**
 * A manifest the size the platform is heading for: 22 areas of 7 routes (154), with id and owner
 * parameters and nested paths, several areas sharing a first segment as users and tokens share /user.
 */
function syntheticRoutes(): RouteSpec[] {
  const list: RouteSpec[] = [];
  for (let i = 0; i < 22; i++) {
    const area = `area${String(i).padStart(2, '0')}`;
    const base = `/group${i % 3}/${area}`;
    const add = (method: RouteSpec['method'], path: string, handler: string) =>
      list.push({
        id: `${area}.${handler}`,
        method,
        path: base + path,
        area,
        handler,
        host: 'base',
        auth: 'required',
        callers: 'full',
        mode: 'buffered',
        style: 'B',
        timeoutSec: 29,
        maxBodyBytes: 1024,
      });
    add('POST', '/create', 'create');
    add('GET', '/list', 'list');
    add('GET', '/{id}', 'get');
    add('PUT', '/{id}', 'update');
    add('DELETE', '/{id}', 'delete');
    add('GET', '/{id}/versions/{version}', 'get-version');
    add('GET', '/s/{owner}/{slug}', 'get-by-slug');
  }
  // Chat-like streaming routes: one function URL for the stream host, beside the runtime function.
  for (const method of ['POST', 'GET'] as const) {
    list.push({
      id: `area00.chat-${method.toLowerCase()}`,
      method,
      path: '/group0/area00/{id}/chat',
      area: 'area00',
      handler: `chat-${method.toLowerCase()}`,
      host: 'stream',
      auth: 'required',
      callers: 'role',
      mode: 'streaming',
      style: 'A',
      timeoutSec: 900,
      maxBodyBytes: 1024,
    });
  }
  return list;
}

/** Logical-id prefixes of the main stack's blocks that do not grow with routes. */
const FIXED_BLOCKS = ['Services', 'Firewall', 'AccessLogs', 'RunTokenRotation', 'ApiRestApiAccount', 'ApiRestApiCloudWatchRole', 'ApiAccessLogs'];

function resourceCounts(templates: { name: string; template: Template }[]): Record<string, number> {
  return Object.fromEntries(templates.map(({ name, template }) => [name, Object.keys((template.toJSON() as { Resources: object }).Resources).length]));
}

describe('stack limits', () => {
  it('keeps every template of the platform under 500 resources', () => {
    // Prepare
    const platform = synthPlatform();

    // Act
    const counts = resourceCounts(allTemplates(platform));

    // Assess
    for (const [name, count] of Object.entries(counts)) expect(count, name).toBeLessThan(MAX_RESOURCES);
  });

  // Entries of the synthetic areas go to their own directory inside the project, not among the real ones.
  const scaleEntries = scratchEntriesDir('scale-entries-');
  afterAll(() => rmSync(scaleEntries, { recursive: true, force: true }));

  it('keeps every template well under 500 resources with ~150 routes', () => {
    // Prepare
    const routes = syntheticRoutes();

    // Act
    const { counts, services } = withScratchOutdir((outdir) => {
      const app = new App({ outdir, analyticsReporting: false, context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new PlatformStack(app, 'scale-test', { stage: 'test', version: '0', routes, entriesDir: scaleEntries });
      const main = Template.fromStack(stack);
      return {
        // The voice service's block (VPC, load balancer, distribution, Fargate, scaling: logical ids under
        // the Services construct) and the prod preset's guardrails (WAF, the access-log bucket, API
        // Gateway's account role and access log group) are fixed, whatever the routes.
        services: Object.keys(main.toJSON().Resources as object).filter((id) => FIXED_BLOCKS.some((prefix) => id.startsWith(prefix))).length,
        counts: resourceCounts([
          { name: 'main', template: main },
          ...[...stack.api.segmentStacks].map(([segment, nested]) => ({ name: `/${segment}`, template: Template.fromStack(nested) })),
        ]),
      };
    });

    // Assess: the main stack grows by five resources per area (function, role, policy, log group,
    // invoke permission), seven per streaming host (the same but two public permissions, and the
    // URL) and one per first path segment; a path stack by about three per route. The services'
    // block does not grow with routes: the margin holds for the rest.
    expect(routes.length).toBeGreaterThanOrEqual(150);
    expect(services).toBeGreaterThan(0);
    // Measured 284 on 2026-11-28 with 44 tables (which grow with areas, not routes) and the prod
    // preset's per-function additions: 300 leaves room for a few areas more before the main stack
    // needs splitting, as the API's paths were.
    expect(counts['main']! - services).toBeLessThan(MAX_RESOURCES * 0.6);
    for (const [name, count] of Object.entries(counts)) expect(count, name).toBeLessThan(name === 'main' ? MAX_RESOURCES * 0.8 : MAX_RESOURCES / 2);
  });
});

describe('cfn-lint', () => {
  it.skipIf(!HAS_CFN_LINT)(
    HAS_CFN_LINT ? 'finds no errors in any synthesized template' : `finds no errors (${CFN_LINT_MISSING})`,
    () => {
      // Prepare
      const { outdir } = synthPlatform();
      const files = readdirSync(outdir).filter((f) => f.endsWith('.template.json'));

      // Act
      const run = cfnLint(files, outdir);
      const findings = run.findings;

      // Assess: exit status bits are 2 errors, 4 warnings, 8 informational; anything else is a crash.
      expect(run.error).toBeUndefined();
      expect(files.length).toBe(synthPlatform().segments.size + 1);
      expect(findings.filter((f) => f.Level === 'Error').map((f) => `${f.Filename} ${f.Rule.Id} ${f.Message}`)).toEqual([]);
      expect(run.status! & ~(4 | 8)).toBe(0);
      // A template the tests read must also be what cfn-lint read.
      expect(JSON.parse(readFileSync(join(outdir, files[0]!), 'utf8'))).toHaveProperty('Resources');
    },
    // cfn-lint reads two dozen templates in 20 to 60 s, more on a loaded machine (it timed out at 60 s
    // once): the limit is a guard against a hang, not a check of speed.
    600_000,
  );
});
