/**
 * The bench's target table: each figure is read from rows of the same run, and a figure whose rows
 * were not run says so rather than passing.
 */
import { describe, expect, it } from 'vitest';
import { checkTargets } from '../bench/targets.ts';
import { sized, type BenchRow } from '../bench/stats.ts';

function row(module: string, name: string, p50: number, extra: Partial<BenchRow> = {}): BenchRow {
  return { module, case: name, unit: 'ms', n: 100, min: p50, p50, p99: p50 * 2, mean: p50, max: p50 * 3, ...extra };
}

describe('checkTargets', () => {
  it('marks every target whose rows are missing as not run', () => {
    // Act
    const checks = checkTargets([]);

    // Assess
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.every((check) => check.met === null && check.measured === null)).toBe(true);
  });

  it('judges a figure from its rows: a ratio within the target is met, one beyond it is missed', () => {
    // Prepare
    const listing = (many: number) => [
      row('listings', 'GET /agent/list?limit=20, 10 agents', 10),
      row('listings', 'GET /agent/list?limit=20, 500 agents', many),
    ];
    const figure = '/agent/list?limit=20 with 500 agents vs 10';

    // Act
    const within = checkTargets(listing(11.5)).find((check) => check.figure === figure);
    const beyond = checkTargets(listing(12.5)).find((check) => check.figure === figure);

    // Assess
    expect(within).toMatchObject({ met: true, measured: '1.15x p50' });
    expect(beyond).toMatchObject({ met: false, measured: '1.25x p50' });
  });

  it('compares throughput as 1:N against the bare server of the same run', () => {
    // Prepare
    const rows = [
      row('user-info', 'bare node:http hello (c=8)', 1, { perSecond: 7000 }),
      row('user-info', 'platform /user/info, token (c=8)', 10, { perSecond: 1400 }),
    ];

    // Act
    const check = checkTargets(rows).find((c) => c.figure.startsWith('GET /user/info'));

    // Assess
    expect(check?.met).toBe(true);
    expect(check?.measured).toContain('(1:5.0)');
  });

  it('judges sizes in KB against their budget: the largest function bundle under 200 KB, the MCP layer under 5 MB', () => {
    // Prepare
    const rows = (largestBytes: number, layerBytes: number) => [
      { module: 'bundles', ...sized('largest function bundle', largestBytes, { note: 'Functions/Area-mcp' }) },
      { module: 'bundles', ...sized('largest function bundle, zod as one namespace (old build)', 546 * 1024) },
      { module: 'bundles', ...sized('MCP modules layer', layerBytes) },
      { module: 'bundles', ...sized('MCP layer, whole dependency trees (old copy)', 12 * 1024 * 1024) },
    ];
    const verdicts = (checks: ReturnType<typeof checkTargets>) =>
      checks.filter((c) => c.figure === 'largest platform function bundle' || c.figure === 'MCP modules layer').map((c) => c.met);

    // Act
    const under = checkTargets(rows(199 * 1024, 2.8 * 1024 * 1024));
    const over = checkTargets(rows(200 * 1024, 5 * 1024 * 1024));

    // Assess
    expect(verdicts(under)).toEqual([true, true]);
    expect(under.find((c) => c.figure === 'largest platform function bundle')?.measured).toBe(
      '199.0 KB, Functions/Area-mcp (546 KB with zod as one namespace)',
    );
    expect(verdicts(over)).toEqual([false, false]);
  });
});

describe('checkTargets: memory', () => {
  it('calls platform memory bounded only when a second identical load does not keep growing it', () => {
    // Prepare
    const memory = (again: number) => [
      row('memory', 'platform RSS, idle after start', 150, { unit: 'MB', n: 1 }),
      row('memory', 'platform RSS, after mixed load', 200, { unit: 'MB', n: 1 }),
      row('memory', 'platform RSS, after a second load', again, { unit: 'MB', n: 1 }),
    ];
    const figure = 'platform RSS after mixed load';

    // Act
    const flat = checkTargets(memory(210)).find((check) => check.figure === figure);
    const growing = checkTargets(memory(260)).find((check) => check.figure === figure);

    // Assess
    expect(flat).toMatchObject({ met: true, measured: '150 → 200 → 210 MB' });
    expect(growing).toMatchObject({ met: false });
  });
});
