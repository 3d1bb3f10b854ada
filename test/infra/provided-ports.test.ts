/**
 * A port an area provides is granted like a kernel port: the area's own function gets the tables
 * behind it, and no other function does unless its module uses the port.
 */
import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';

import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { areas, KERNEL_RESOURCES } from '../../lib/manifest/index.ts';
import { notesArea } from '../fixtures/notes-area/notes.module.ts';
import { cdkJsonContext, roleStatements, withScratchOutdir, type TemplateJson, scratchEntriesDir } from './synth-platform.ts';

const scratchEntries = scratchEntriesDir('notes-entries-');
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

describe('ports provided by an area', () => {
  it("are granted to the providing area's function only", () => {
    // Prepare
    const { stack, template, id } = withScratchOutdir((outdir) => {
      const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const stack = new PlatformStack(app, 'notes-test', { stage: 'test', version: '0', areas: [...areas, notesArea], entriesDir: scratchEntries });
      return {
        stack,
        template: Template.fromStack(stack).toJSON() as TemplateJson,
        id: (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never),
      };
    });
    const tableIds = new Map([...stack.data.tables].map(([name, table]) => [id(table), name]));
    const tablesOf = (role: string) =>
      [
        ...new Set(
          roleStatements(template, role).flatMap((s) =>
            [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => tableIds.get(m[1]!)).filter((n) => n !== undefined),
          ),
        ),
      ].sort();

    // Act
    const byArea = new Map([...stack.functions.areas].map(([area, fn]) => [area, tablesOf(id(fn.function.role!))]));

    // Assess
    expect(stack.data.tables.has('notes')).toBe(true);
    expect(byArea.get('notes')).toEqual([...KERNEL_RESOURCES.tables, 'notes'].sort());
    expect([...byArea].filter(([area, tables]) => area !== 'notes' && tables.includes('notes'))).toEqual([]);
  });
});
