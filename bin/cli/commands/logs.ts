import { setTimeout as sleep } from 'node:timers/promises';
import { expectArgs, readNumber, type Context } from '../args.ts';
import { UsageError } from '../errors.ts';
import { dataOrFail, type Connection } from '../http.ts';
import { bold, dimError, formatRow, isoTime } from '../output.ts';

const DEFAULT_LIMIT = 20;
/** The largest page the logs listing serves (functions/logs/log.schema.ts). */
const MAX_PAGE_SIZE = 200;
const POLL_INTERVAL_MS = 2_000;

/** A usage record as the logs listing answers it. */
type LogSummary = Awaited<ReturnType<typeof latest>>[number];

const HEADER = ['TIME', 'STATUS', 'TYPE', 'RESOURCE', 'MS', 'CREDITS', 'REQUEST ID'];
/** Fixed widths, so rows printed poll after poll line up under one header. */
const WIDTHS = [20, 7, 14, 36, 6, 7, 36];

/**
 * `logs [--follow] [--limit N]`: the caller's latest usage records, oldest first. `--follow` then
 * polls the newest page and prints the records it has not printed yet, until Ctrl-C (exit 0).
 */
export async function logs(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const limit = readNumber('limit', context.values.limit) ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
  const connection = await context.connect();
  const json = context.output.json;

  const follow = context.values.follow === true;
  if (!follow) {
    const first = await latest(connection, limit);
    if (json) console.log(JSON.stringify(first, null, 2));
    else {
      console.log(bold(formatRow(HEADER, WIDTHS)));
      for (const record of oldestFirst(first)) console.log(row(record));
    }
    return 0;
  }

  // Followed records are one JSON object a line with --json, so a script can read them as they come.
  const print = (record: LogSummary) => console.log(json ? JSON.stringify(record) : row(record));
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  try {
    // The first read takes the largest page, so that the first poll knows every record it may see again.
    const page = await latest(connection, MAX_PAGE_SIZE, stop.signal);
    if (!json) console.log(bold(formatRow(HEADER, WIDTHS)));
    oldestFirst(page.slice(0, limit)).forEach(print);
    process.stderr.write(dimError('Following new records; Ctrl-C stops.\n'));
    // Only the newest page is read, so the ids printed so far need only cover it: a record that has
    // left the page never comes back.
    let printed = new Set(page.map((record) => record.requestId));
    while (!stop.signal.aborted) {
      await sleep(POLL_INTERVAL_MS, undefined, { signal: stop.signal });
      const newest = await latest(connection, MAX_PAGE_SIZE, stop.signal);
      oldestFirst(newest.filter((record) => !printed.has(record.requestId))).forEach(print);
      printed = new Set(newest.map((record) => record.requestId));
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
  return 0;
}

async function latest(connection: Connection, pageSize: number, signal?: AbortSignal) {
  const page = await dataOrFail(connection.api.GET('/logs', { params: { query: { pageSize: String(pageSize) } }, signal }));
  return page.logs;
}

function oldestFirst(records: readonly LogSummary[]): LogSummary[] {
  return [...records].sort((a, b) => a.createdAt - b.createdAt);
}

function row(record: LogSummary): string {
  const status = record.error === null ? record.status : `${record.status} ${record.error.code}`;
  return formatRow(
    [
      isoTime(record.createdAt),
      status,
      record.requestType ?? '-',
      record.resourceId,
      String(record.metrics.durationMs),
      String(record.creditsUsed),
      record.requestId,
    ],
    WIDTHS,
  );
}
