/**
 * The performance targets the platform holds itself to (issues 11 and 13), each read from rows of the same
 * run: a figure is a ratio or a difference between two rows measured side by side, so it survives
 * a change of machine. The runner prints them under the table; a target whose rows were not run
 * (a module left out) says so instead of passing.
 */
import type { BenchRow } from './stats.ts';

export interface TargetCheck {
  /** What is measured, as a reader would say it. */
  readonly figure: string;
  /** The target, in words. */
  readonly target: string;
  /** The figure from this run; null when one of its rows is missing. */
  readonly measured: string | null;
  readonly met: boolean | null;
}

interface Target {
  readonly figure: string;
  readonly target: string;
  /** The rows this figure needs, as `module/case`. */
  readonly rows: readonly string[];
  /** Given those rows, in order: the figure and whether it meets the target. */
  evaluate(rows: readonly BenchRow[]): { readonly measured: string; readonly met: boolean };
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** Throughput of `row` as a fraction of `baseline`'s: "1:N" reads as N times slower. */
function throughputRatio(row: BenchRow, baseline: BenchRow): number {
  return (baseline.perSecond ?? Number.NaN) / (row.perSecond ?? Number.NaN);
}

export const TARGETS: readonly Target[] = [
  {
    figure: 'GET /user/info (token) at 8 concurrent vs bare node:http',
    target: '1:7 or better',
    rows: ['user-info/platform /user/info, token (c=8)', 'user-info/bare node:http hello (c=8)'],
    evaluate: ([row, base]) => {
      const ratio = throughputRatio(row!, base!);
      return {
        measured: `${fixed(row!.perSecond!, 0)} vs ${fixed(base!.perSecond!, 0)} req/s (1:${fixed(ratio)}); p99 ${fixed(row!.p99)} ms`,
        met: ratio <= 7,
      };
    },
  },
  {
    figure: 'trivial action at 8 concurrent, vs 40 req/s before',
    target: '4x the throughput (160 req/s on the reference machine)',
    rows: ['actions/GET /action/{id} (router) (c=8)'],
    // An absolute figure, unlike the others: the baseline is the platform before the change (40 req/s
    // on the reference 2-core machine), which no run can measure side by side any more.
    evaluate: ([row]) => ({
      measured: `${fixed(row!.perSecond!, 0)} req/s, p50 ${fixed(row!.p50)} ms, p99 ${fixed(row!.p99)} ms`,
      met: row!.perSecond! >= 160,
    }),
  },
  {
    figure: 'trivial action, p99 from 8 to 32 concurrent',
    target: 'p99 grows with load (about 4x), not faster',
    rows: ['actions/GET /action/{id} (router) (c=32)', 'actions/GET /action/{id} (router) (c=8)'],
    evaluate: ([at32, at8]) => {
      const growth = at32!.p99 / at8!.p99;
      return {
        measured: `p99 ${fixed(at8!.p99)} → ${fixed(at32!.p99)} ms (${fixed(growth)}x); ${fixed(at8!.perSecond!, 0)} → ${fixed(at32!.perSecond!, 0)} req/s`,
        met: growth <= 4.5,
      };
    },
  },
  {
    figure: '/agent/list?limit=20 with 500 agents vs 10',
    target: 'within 1.2x',
    rows: ['listings/GET /agent/list?limit=20, 500 agents', 'listings/GET /agent/list?limit=20, 10 agents'],
    evaluate: ([many, few]) => ({ measured: `${fixed(many!.p50 / few!.p50, 2)}x p50`, met: many!.p50 / few!.p50 <= 1.2 }),
  },
  {
    figure: 'agent create with 475-499 agents vs 10-34',
    target: 'within 1.2x',
    rows: ['listings/POST /agent/create, owner holds 475-499', 'listings/POST /agent/create, owner holds 10-34'],
    evaluate: ([many, few]) => ({ measured: `${fixed(many!.p50 / few!.p50, 2)}x p50`, met: many!.p50 / few!.p50 <= 1.2 }),
  },
  {
    figure: "MCP tools/call over the tenant host's own answer",
    target: 'at most +3 ms p50',
    rows: ['mcp/POST /mcp/{id} tools/call (raw)', 'mcp/mcpRuntime.handle (host process)', 'mcp/bare http, same store calls + mcpRuntime.handle'],
    // The third row is the floor: the endpoint's store calls and HTTP around the same port, without the kernel.
    evaluate: ([row, host, same]) => ({
      measured: `+${fixed(row!.p50 - host!.p50)} ms p50 (host ${fixed(host!.p50)} ms); its store calls alone +${fixed(same!.p50 - host!.p50)} ms`,
      met: row!.p50 - host!.p50 <= 3,
    }),
  },
  {
    figure: 'chat platform share, new conversation, to the end',
    target: 'at most +10 ms p50',
    rows: ['chat/chat, new conv, end', 'chat/runtime /invoke, end', 'chat/bare http, same store calls + runtime /invoke, end'],
    // The third row is the floor: the chat's store calls and one HTTP hop around the same run, without the kernel.
    evaluate: ([row, direct, same]) => ({
      measured: `+${fixed(row!.p50 - direct!.p50)} ms p50; its store calls alone +${fixed(same!.p50 - direct!.p50)} ms`,
      met: row!.p50 - direct!.p50 <= 10,
    }),
  },
  {
    figure: '`npm start` to first 200 on /health (spawned)',
    target: 'under 1 s',
    rows: ['startup/spawn npm start (built), empty dir', 'startup/spawn npm start (built), restart', 'startup/spawn node, bare http'],
    evaluate: ([empty, restart, bare]) => ({
      measured: `${fixed(empty!.p50, 0)} ms p50 empty dir, ${fixed(restart!.p50, 0)} ms restart (${fixed(restart!.p50 / bare!.p50)}x bare node)`,
      met: empty!.p50 < 1000 && restart!.p50 < 1000,
    }),
  },
  {
    figure: "a tenant's first run (runtime start)",
    target: 'under 300 ms',
    // With the platform's spare runtime (RUNTIME_SPARES=1), next to the same first run without one.
    rows: ['prewarm/first run of a tenant, spare ready', 'prewarm/first run of a tenant, no spare'],
    evaluate: ([first, cold]) => ({
      measured: `${fixed(first!.p50, 0)} ms p50, max ${fixed(first!.max, 0)} ms (no spare: ${fixed(cold!.p50, 0)} ms p50)`,
      met: first!.max < 300,
    }),
  },
  {
    figure: 'largest platform function bundle',
    target: 'under 200 KB (each)',
    rows: ['bundles/largest function bundle', 'bundles/largest function bundle, zod as one namespace (old build)'],
    evaluate: ([row, old]) => ({
      measured: `${fixed(row!.p50)} KB, ${row!.note ?? ''} (${fixed(old!.p50, 0)} KB with zod as one namespace)`,
      met: row!.p50 < 200,
    }),
  },
  {
    figure: 'MCP modules layer',
    target: 'under 5 MB',
    rows: ['bundles/MCP modules layer', 'bundles/MCP layer, whole dependency trees (old copy)'],
    evaluate: ([row, old]) => ({
      measured: `${fixed(row!.p50 / 1024, 2)} MB (${fixed(old!.p50 / 1024)} MB as the whole trees)`,
      met: row!.p50 < 5 * 1024,
    }),
  },
  {
    figure: 'the first run after platform start',
    target: 'under 300 ms',
    rows: ['prewarm/first run after platform start, spare', 'prewarm/first run after platform start, no spare'],
    evaluate: ([first, cold]) => ({
      measured: `${fixed(first!.p50, 0)} ms p50, max ${fixed(first!.max, 0)} ms (no spare: ${fixed(cold!.p50, 0)} ms p50)`,
      met: first!.max < 300,
    }),
  },
  {
    figure: 'platform RSS after mixed load',
    target: 'bounded: a second identical load adds under 10%',
    rows: ['memory/platform RSS, idle after start', 'memory/platform RSS, after mixed load', 'memory/platform RSS, after a second load'],
    evaluate: ([idle, loaded, again]) => ({
      measured: `${fixed(idle!.p50, 0)} → ${fixed(loaded!.p50, 0)} → ${fixed(again!.p50, 0)} MB`,
      met: again!.p50 <= loaded!.p50 * 1.1,
    }),
  },
  {
    figure: 'search, 10,000 chunks (issue 13)',
    target: 'p50 under 50 ms, under 3x the 1,000-chunk p50 (the corpus grows 10x)',
    rows: ['knowledge/search, 10000 chunks', 'knowledge/search, 1000 chunks', 'knowledge/linear scan, 10000 chunks'],
    evaluate: ([large, small, scan]) => ({
      measured: `p50 ${fixed(large!.p50)} ms (${fixed(large!.p50 / small!.p50, 2)}x 1,000 chunks, ${fixed(large!.p50 / scan!.p50, 2)}x a linear scan); p99 ${fixed(large!.p99)} ms`,
      met: large!.p50 < 50 && large!.p50 < small!.p50 * 3,
    }),
  },
  {
    figure: 'GET /search over HTTP, 10,000 public resources (issue 14)',
    target: 'p50 under 50 ms',
    rows: ['search/GET /search, 10000 resources', 'search/GET /search, 1000 resources'],
    evaluate: ([large, small]) => ({
      measured: `p50 ${fixed(large!.p50)} ms (${fixed(large!.p50 / small!.p50, 2)}x 1,000 resources); p99 ${fixed(large!.p99)} ms`,
      met: large!.p50 < 50,
    }),
  },
  {
    figure: 'a 10 KB page through the site host vs the same object read from the store (issue 15)',
    target: 'at most +5 ms p50: serving adds the alias read and HTTP, nothing proportional to the file',
    rows: ['websites/site host, 10 KB page', 'websites/store read, same object'],
    evaluate: ([site, store]) => ({
      measured: `p50 ${fixed(site!.p50)} vs ${fixed(store!.p50)} ms (+${fixed(site!.p50 - store!.p50)} ms); p99 ${fixed(site!.p99)} vs ${fixed(store!.p99)} ms`,
      met: site!.p50 - store!.p50 <= 5,
    }),
  },
  {
    figure: 'a 1 KB site file at 8 concurrent vs a bare static file server (issue 33)',
    target: '1:3 or better',
    rows: ['websites/site host, 1 KB file (c=8)', 'websites/bare static file server, same file (c=8)'],
    evaluate: ([site, bare]) => {
      const ratio = throughputRatio(site!, bare!);
      return {
        measured: `${fixed(site!.perSecond!, 0)} vs ${fixed(bare!.perSecond!, 0)} req/s (1:${fixed(ratio)}); p50 ${fixed(site!.p50)} vs ${fixed(bare!.p50)} ms`,
        met: ratio <= 3,
      };
    },
  },
  {
    figure: 'voice: one 20 ms audio frame through the bridge and an echo agent vs a bare ws echo server',
    target: 'at most 5 ms added at p99',
    rows: ['voice/bridge + echo agent, one 20 ms frame', 'voice/bare ws echo server, same frame'],
    evaluate: ([bridge, bare]) => ({
      measured: `p50 ${fixed(bridge!.p50, 2)} vs ${fixed(bare!.p50, 2)} ms; p99 ${fixed(bridge!.p99, 2)} vs ${fixed(bare!.p99, 2)} ms (+${fixed(bridge!.p99 - bare!.p99, 2)} ms)`,
      met: bridge!.p99 - bare!.p99 <= 5,
    }),
  },
  {
    figure: 'channels: inbound acknowledgement while the agent takes 3 s per answer (issue 18)',
    target: 'p99 well inside the chat platform’s 3 s deadline (under 500 ms)',
    rows: ['channels/inbound ack, agent answering in 3 s'],
    evaluate: ([row]) => ({ measured: `p50 ${fixed(row!.p50)} ms, p99 ${fixed(row!.p99)} ms`, met: row!.p99 < 500 }),
  },
  // Fair share (issue 33, engineer C): test/bench/fair-share.bench.ts.
  ...[32, 64, 128].map((c) => ({
    figure: `GET /health while one tenant runs actions at c=${c} (issue 33)`,
    target: 'p99 at most 20 ms',
    rows: [`fair-share/GET /health, one tenant at c=${c}`, `fair-share/GET /health, one tenant at c=${c}, admission off`],
    evaluate: ([row, off]: readonly BenchRow[]) => ({
      measured: `p50 ${fixed(row!.p50)} ms, p99 ${fixed(row!.p99)} ms (admission off: p50 ${fixed(off!.p50)} ms, p99 ${fixed(off!.p99)} ms)`,
      met: row!.p99 <= 20,
    }),
  })),
  {
    figure: 'a tenant over its share: its refusals at c=64 (issue 33)',
    target: '429 with Retry-After within 50 ms (p99)',
    rows: ["fair-share/loud tenant's 429, c=64"],
    evaluate: ([row]) => ({ measured: `p50 ${fixed(row!.p50)} ms, p99 ${fixed(row!.p99)} ms`, met: row!.p99 <= 50 }),
  },
  // --- issue 33, tenants at scale (engineer B; rows from tenants.bench.ts) ---
  ...(['trivial action', 'echo chat, new conversation', 'MCP tools/call'] as const).flatMap((kind) =>
    [50, 200].map((tenants): Target => ({
      figure: `${kind} at 8 concurrent over ${tenants} tenants vs 1 tenant (issue 33)`,
      target: "at least half of 1 tenant's throughput",
      rows: [`tenants/${kind} (c=8), ${tenants} tenants`, `tenants/${kind} (c=8), 1 tenant`],
      evaluate: ([many, one]) => ({
        measured: `${fixed(many!.perSecond!, 1)} vs ${fixed(one!.perSecond!, 1)} req/s (${fixed(many!.perSecond! / one!.perSecond!, 2)}x); p50 ${fixed(many!.p50)} vs ${fixed(one!.p50)} ms`,
        met: many!.perSecond! >= one!.perSecond! / 2,
      }),
    })),
  ),
  // --- end of issue 33, tenants at scale ---
];

/** Every target against this run's rows. */
export function checkTargets(rows: readonly BenchRow[]): TargetCheck[] {
  const byKey = new Map(rows.map((row) => [`${row.module}/${row.case}`, row]));
  return TARGETS.map((target) => {
    const found = target.rows.map((key) => byKey.get(key));
    if (found.some((row) => row === undefined)) return { figure: target.figure, target: target.target, measured: null, met: null };
    const { measured, met } = target.evaluate(found as BenchRow[]);
    return { figure: target.figure, target: target.target, measured, met };
  });
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  const verdict = (c: TargetCheck) => (c.met === null ? 'not run' : c.met ? 'met' : 'MISSED');
  const widths = [
    Math.max(...checks.map((c) => c.figure.length)),
    Math.max(...checks.map((c) => (c.measured ?? '-').length)),
    Math.max(...checks.map((c) => c.target.length)),
  ];
  return checks
    .map((c) => `${c.figure.padEnd(widths[0]!)}  ${(c.measured ?? '-').padEnd(widths[1]!)}  ${c.target.padEnd(widths[2]!)}  ${verdict(c)}`)
    .join('\n');
}
