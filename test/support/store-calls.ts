import type { Db } from '../../functions/core/db/dynamo.ts';

/** One DynamoDB command as the store saw it: the logical table and the command, e.g. `keys.Query`. */
export interface StoreCall {
  readonly table: string;
  readonly command: string;
  /** Ordinals of the moments it was sent and answered, on one counter for all calls: which overlapped. */
  readonly sent: number;
  settled: number;
}

const MIDDLEWARE = 'testStoreCallRecorder';

/**
 * Runs `work` and returns its result with the DynamoDB commands sent meanwhile (of every store on
 * `db`), in the order they were sent. Other work in flight is recorded too, so tests look only at
 * the tables the code under test reads.
 */
export async function recordStoreCalls<T>(db: Db, tablePrefix: string, work: () => Promise<T>): Promise<{ result: T; calls: StoreCall[] }> {
  const calls: StoreCall[] = [];
  let moment = 0;
  db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? '').replace(/Command$/, '');
      const sent = moment++;
      // A batch or transaction is one call on each table it names, so no table's reads go unseen.
      const sentCalls: StoreCall[] = tablesOf(args.input).map((name) => ({
        table: name.startsWith(tablePrefix) ? name.slice(tablePrefix.length) : name,
        command,
        sent,
        settled: Number.NaN,
      }));
      calls.push(...sentCalls);
      try {
        return await next(args);
      } finally {
        const settled = moment++;
        for (const call of sentCalls) call.settled = settled;
      }
    },
    { step: 'initialize', name: MIDDLEWARE, override: true },
  );
  try {
    return { result: await work(), calls };
  } finally {
    db.doc.middlewareStack.remove(MIDDLEWARE);
  }
}

/** The tables a command's input names: its own, a batch's `RequestItems`, a transaction's items. */
function tablesOf(input: unknown): string[] {
  const { TableName, RequestItems, TransactItems } = input as {
    TableName?: unknown;
    RequestItems?: Record<string, unknown>;
    TransactItems?: Record<string, { TableName?: unknown }>[];
  };
  const names = [TableName, ...Object.keys(RequestItems ?? {}), ...(TransactItems ?? []).flatMap((item) => Object.values(item).map((op) => op.TableName))];
  const tables = [...new Set(names.filter((name): name is string => typeof name === 'string'))];
  return tables.length > 0 ? tables : ['(no table)'];
}

/** `table.Command` of the calls on `tables`. */
export function callsOn(calls: readonly StoreCall[], ...tables: string[]): string[] {
  return calls.filter((c) => tables.includes(c.table)).map((c) => `${c.table}.${c.command}`);
}

/** The call `table.Command` (the first one); throws when there was none. */
export function callOf(calls: readonly StoreCall[], label: string): StoreCall {
  const found = calls.find((c) => `${c.table}.${c.command}` === label);
  if (found === undefined) throw new Error(`no ${label} among ${calls.map((c) => `${c.table}.${c.command}`).join(', ')}`);
  return found;
}

/** True when the two calls were in flight at the same time. */
export function overlapped(a: StoreCall, b: StoreCall): boolean {
  return a.sent < b.settled && b.sent < a.settled;
}
