/**
 * Schedules in the cloud: an area's `schedule` entry points become one function for the area and
 * one EventBridge Scheduler schedule each, granted what the area declares and nothing of the
 * kernel (schedules authenticate no one). The sample area of the local test is added here too.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';

import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { areas, resourcesOf } from '../../lib/manifest/index.ts';
import { sampleArea } from '../fixtures/sample-area/sample.module.ts';
import { cdkJsonContext, roleStatements, withScratchOutdir, type TemplateJson, scratchEntriesDir } from './synth-platform.ts';

const scratchEntries = scratchEntriesDir('schedule-entries-');
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

function synthWithSample() {
  return withScratchOutdir((outdir) => {
    const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new PlatformStack(app, 'schedule-test', {
      stage: 'test',
      version: '0',
      areas: [...areas.filter((area) => area.name !== 'voice'), sampleArea],
      entriesDir: scratchEntries,
    });
    const template = Template.fromStack(stack).toJSON() as TemplateJson;
    return { stack, template, id: (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never) };
  });
}

describe('schedules', () => {
  it("invoke the area's schedule function once per firing with the entry point's id, no retries, granted the area's ports only", () => {
    // Prepare
    const { stack, template, id } = synthWithSample();
    const fn = stack.functions.schedules.get('sample');
    const tableIds = new Map([...stack.data.tables].map(([name, table]) => [id(table), name]));

    // Act
    // The sample's own (the manifest's areas have theirs too: the code server's billing tick, issue 36).
    const schedules = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && JSON.stringify(r.Properties?.['Target']?.Input ?? '').includes('sample.'),
    );
    const statements = roleStatements(template, id(fn!.function.role!));
    const tables = [
      ...new Set(
        statements.flatMap((s) => [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => tableIds.get(m[1]!)).filter((n) => n !== undefined)),
      ),
    ].sort();
    const entry = readFileSync(join(scratchEntries, 'schedule-sample.entry.ts'), 'utf8');

    // Assess
    expect(fn).toBeDefined();
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Target: {
        Arn: { 'Fn::GetAtt': [id(fn!.function), 'Arn'] },
        Input: JSON.stringify({ entryPoint: 'sample.log-public-agents' }),
        RetryPolicy: { MaximumRetryAttempts: 0 },
      },
    });
    expect(tables).toEqual([...resourcesOf([sampleArea], []).tables].sort());
    expect(tables).toEqual(['agent-counts', 'agent-names', 'agents']);
    expect(statements.flatMap((s) => [s.Action].flat()).filter((a) => /^(kms|secretsmanager|lambda):/.test(a))).toEqual([]);
    expect(entry).toContain('scheduleHandler("sample"');
    expect(entry).toContain('test/fixtures/sample-area/handlers/log-public-agents.schedule.ts');
  });
});
