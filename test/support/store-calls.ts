import type { Db } from '../../functions/core/db/dynamo.ts';

/** One DynamoDB command as the store saw it: the logical table and the command, e.g. `keys.Query`. */
export interface StoreCall {
  readonly table: string;
  readonly command: string;
}

const MIDDLEWARE = 'testStoreCallRecorder';

/**
 * Runs `work` and returns its result with the DynamoDB commands sent meanwhile (of every store on
 * `db`), in the order they were sent. Other work in flight is recorded too, so tests look only at
 * the tables the code under test reads.
 */
export async function recordStoreCalls<T>(db: Db, tablePrefix: string, work: () => Promise<T>): Promise<{ result: T; calls: StoreCall[] }> {
  const calls: StoreCall[] = [];
  db.doc.middlewareStack.add(
    (next, context) => (args) => {
      const name = (args.input as { TableName?: unknown }).TableName;
      const table = typeof name === 'string' && name.startsWith(tablePrefix) ? name.slice(tablePrefix.length) : String(name);
      calls.push({ table, command: String(context.commandName ?? '').replace(/Command$/, '') });
      return next(args);
    },
    { step: 'initialize', name: MIDDLEWARE, override: true },
  );
  try {
    return { result: await work(), calls };
  } finally {
    db.doc.middlewareStack.remove(MIDDLEWARE);
  }
}

/** `table.Command` of the calls on `tables`. */
export function callsOn(calls: readonly StoreCall[], ...tables: string[]): string[] {
  return calls.filter((c) => tables.includes(c.table)).map((c) => `${c.table}.${c.command}`);
}
