import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { throwFirstFailure } from './all-settled.ts';
import { queryItems, writeIf, type Db } from './db/dynamo.ts';
import type { UsageRecordListener } from './usage-log.ts';
import { countersOf, resourceScope, userScope, type CounterDelta } from './usage-counters.ts';

/** A counter item as read: its key, figures and the fields set on it. */
export type CounterItem = Readonly<Record<string, unknown>> & { readonly scope: string; readonly slot: string };

/**
 * One counter item moved by `delta`: a single UpdateItem whose ADDs are atomic, so concurrent runs
 * of one user (or of one popular resource) all count without a read or a retry. No transaction:
 * DynamoDB refuses transactions that touch one item at once, and counters are exactly that.
 */
export async function addToCounter(db: Db, table: string, delta: CounterDelta): Promise<void> {
  const adds = Object.entries(delta.add);
  const sets = Object.entries(delta.set);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  adds.forEach(([field, value], i) => {
    names[`#a${i}`] = field;
    values[`:a${i}`] = value;
  });
  sets.forEach(([field, value], i) => {
    names[`#s${i}`] = field;
    values[`:s${i}`] = value;
  });
  const add = `ADD ${adds.map((_, i) => `#a${i} :a${i}`).join(', ')}`;
  const set = sets.length === 0 ? '' : ` SET ${sets.map((_, i) => `#s${i} = :s${i}`).join(', ')}`;
  await db.doc.send(
    new UpdateCommand({
      TableName: table,
      Key: { scope: delta.scope, slot: delta.slot },
      UpdateExpression: add + set,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

/**
 * Takes back one record's `delta` from a counter item: the same ADDs negated, then the item deleted
 * if that left it counting nothing (`n = 0`), so no zero row stands for a run that was not recorded.
 * The delete is conditional, so a record counted on the item meanwhile keeps its figures.
 */
async function takeBack(db: Db, table: string, delta: CounterDelta): Promise<void> {
  const negated = Object.fromEntries(Object.entries(delta.add).map(([field, value]) => [field, -value]));
  await addToCounter(db, table, { ...delta, add: negated });
  await writeIf(
    db.doc.send(
      new DeleteCommand({
        TableName: table,
        Key: { scope: delta.scope, slot: delta.slot },
        ConditionExpression: '#n = :zero',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    ),
  );
}

/**
 * The usage recorder's listener: each record adds to its four counter items (usage-counters.ts),
 * all at once and beside the record's own put. When that put fails, the additions that landed are
 * taken back (the record is the truth figures must agree with); one that cannot be is reported.
 */
export function createUsageCounters(db: Db): UsageRecordListener {
  const table = db.table('usage-stats');
  return {
    async recorded(record, stored) {
      const deltas = countersOf(record);
      const added = await Promise.allSettled(deltas.map((delta) => addToCounter(db, table, delta)));
      const recorded = await stored.then(
        () => true,
        () => false,
      );
      if (recorded) return throwFirstFailure(added);
      const landed = deltas.filter((_, i) => added[i]?.status === 'fulfilled');
      const takenBack = await Promise.allSettled(landed.map((delta) => takeBack(db, table, delta)));
      const failed = takenBack.flatMap((outcome, i) => (outcome.status === 'rejected' ? [landed[i]!] : []));
      if (failed.length > 0) {
        const items = failed.map((delta) => `${delta.scope} ${delta.slot}`).join(', ');
        throw new Error(`usage counters added for request ${record.requestId} could not be taken back (${items})`, {
          cause: takenBack.find((outcome) => outcome.status === 'rejected')?.reason,
        });
      }
    },
  };
}

/** Reads of the counters; every read is a key range, never a scan of records. */
export interface UsageStatsStore {
  /** The user's items whose slot lies in [fromSlot, toSlot] (slots sort as strings: `h#…`, `d#…`, `r#…`). */
  userSlots(userId: string, fromSlot: string, toSlot: string): Promise<CounterItem[]>;
  /** The resource's day items (every payer's calls) in [fromSlot, toSlot]. */
  resourceSlots(resourceId: string, fromSlot: string, toSlot: string): Promise<CounterItem[]>;
}

export function createUsageStatsStore(db: Db): UsageStatsStore {
  const table = db.table('usage-stats');
  const range = (scope: string, from: string, to: string) =>
    queryItems<CounterItem>(db, {
      TableName: table,
      KeyConditionExpression: '#scope = :scope AND #slot BETWEEN :from AND :to',
      ExpressionAttributeNames: { '#scope': 'scope', '#slot': 'slot' },
      ExpressionAttributeValues: { ':scope': scope, ':from': from, ':to': to },
    });
  return {
    userSlots: (userId, from, to) => range(userScope(userId), from, to),
    resourceSlots: (resourceId, from, to) => range(resourceScope(resourceId), from, to),
  };
}
