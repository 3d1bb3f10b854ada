/**
 * Shared shapes and arithmetic for `npm run bench`. A bench module measures samples, turns them
 * into rows with `measured`, and relates each figure to a baseline measured in the same run with
 * `versus`: ratios survive a change of machine, absolute milliseconds do not.
 */

export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
}

export interface Ratio {
  /** The `case` of the baseline row, in the same module. */
  readonly baseline: string;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
}

export interface BenchRow extends Summary {
  /** Filled in by the runner from the module's name. */
  readonly module: string;
  readonly case: string;
  /** Milliseconds for timings; KB (1024 bytes, as esbuild prints them) for sizes (`sized`); MB for memory. */
  readonly unit: 'ms' | 'KB' | 'MB';
  /** Completed operations per second of wall time, for rounds run under load. */
  readonly perSecond?: number;
  /** This row divided by its baselines; the first one is the headline figure. */
  readonly ratios?: readonly Ratio[];
  readonly note?: string;
}

export type MeasuredRow = Omit<BenchRow, 'module'>;

/** Nearest-rank percentile of already sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples to summarize');
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, x) => total + x, 0);
  return {
    n: sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}

export function measured(name: string, samples: readonly number[], extra: { perSecond?: number; note?: string; unit?: 'ms' | 'MB' } = {}): MeasuredRow {
  return { case: name, unit: 'ms', ...summarize(samples), ...extra };
}

/**
 * A size, in KB, as a row of one sample: sizes are read, not sampled, so they are the same in every
 * run and need no percentiles; the row still divides by a baseline like the timings.
 */
export function sized(name: string, bytes: number, extra: { note?: string } = {}): MeasuredRow {
  const kb = bytes / 1024;
  return { case: name, unit: 'KB', n: 1, min: kb, p50: kb, p99: kb, mean: kb, max: kb, ...extra };
}

/** `row` with one more ratio against `baseline` (appended, so the first one stays the headline). */
export function versus(row: MeasuredRow, baseline: MeasuredRow): MeasuredRow {
  const ratio: Ratio = { baseline: baseline.case, p50: row.p50 / baseline.p50, p99: row.p99 / baseline.p99, mean: row.mean / baseline.mean };
  return { ...row, ratios: [...(row.ratios ?? []), ratio] };
}

/** Below this many samples a 99th percentile is just the maximum again, so the table leaves it out. */
const MIN_SAMPLES_FOR_P99 = 50;

function ms(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function times(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : '-';
}

/**
 * Plain-text table, one block per module. A row with several baselines gets one continuation line
 * per extra ratio, so every ratio names what it divides by.
 */
export function formatTable(rows: readonly BenchRow[]): string {
  const header = ['case', 'n', 'unit', 'p50', 'p99', 'mean', 'max', 'ops/s', 'x p50', 'x p99', 'x mean', 'baseline'];
  const right = new Set([1, 3, 4, 5, 6, 7, 8, 9, 10]);
  const body: (string[] | string)[] = [];
  let module: string | null = null;
  for (const row of rows) {
    if (row.module !== module) {
      module = row.module;
      body.push(`[${module}]`);
    }
    const first = row.ratios?.[0];
    const ratioCells = (r: Ratio | undefined) =>
      r ? [times(r.p50), row.n >= MIN_SAMPLES_FOR_P99 ? times(r.p99) : '-', times(r.mean), r.baseline] : ['', '', '', ''];
    body.push([
      row.case,
      String(row.n),
      row.unit,
      ms(row.p50),
      row.n >= MIN_SAMPLES_FOR_P99 ? ms(row.p99) : '-',
      ms(row.mean),
      ms(row.max),
      row.perSecond === undefined ? '' : row.perSecond.toFixed(0),
      ...ratioCells(first),
    ]);
    for (const extra of row.ratios?.slice(1) ?? []) body.push(['', '', '', '', '', '', '', '', ...ratioCells(extra)]);
    if (row.note) body.push(`    note: ${row.note}`);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (typeof line === 'string' ? 0 : (line[i] ?? '').length))));
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const rule = '-'.repeat(widths.reduce((total, w) => total + w + 2, -2));
  return [render(header), rule, ...body.map((line) => (typeof line === 'string' ? line : render(line)))].join('\n');
}
