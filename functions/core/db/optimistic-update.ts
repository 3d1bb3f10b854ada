import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { sendIf, writeIf, type Db } from './dynamo.ts';

/**
 * Writes `item` over the stored record only if that record still has the `updatedAt` it was read
 * with (`expectedUpdatedAt` null: only if there is no record yet), and returns the record as
 * written, or null when someone else wrote it since. Of two writers that read the same version
 * exactly one wins; the other re-reads or reports a conflict instead of silently undoing the first
 * one's change. Every record written this way carries `updatedAt`, so a record without one does not
 * exist.
 */
export async function putIfUnchanged<T extends { readonly updatedAt: number }>(
  db: Db,
  table: string,
  item: T,
  expectedUpdatedAt: number | null,
): Promise<T | null> {
  // A write within the millisecond of the one it replaces would leave the version as it was, and a
  // second writer holding that version would pass its condition too.
  const written = expectedUpdatedAt !== null && item.updatedAt <= expectedUpdatedAt ? { ...item, updatedAt: expectedUpdatedAt + 1 } : item;
  const applied = await writeIf(
    db.doc.send(
      new PutCommand({
        TableName: table,
        Item: written,
        ...(expectedUpdatedAt === null
          ? { ConditionExpression: 'attribute_not_exists(updatedAt)' }
          : { ConditionExpression: 'updatedAt = :expected', ExpressionAttributeValues: { ':expected': expectedUpdatedAt } }),
      }),
    ),
  );
  return applied ? written : null;
}

/**
 * Sets `changes` (undefined values skipped) on the item at `key` if it still has the `updatedAt` it
 * was read with, moving `updatedAt` on; returns the item as written, or null when someone changed
 * it since (or it is gone). Unlike `putIfUnchanged` it writes only those fields, so counters other
 * writers move with atomic ADDs (run outcomes, usage) are never undone by an owner's edit.
 */
export async function updateIfUnchanged<T>(
  db: Db,
  table: string,
  key: Record<string, unknown>,
  changes: Readonly<Record<string, unknown>>,
  expectedUpdatedAt: number,
  now: number,
): Promise<T | null> {
  const fields = fieldAssignments(changes);
  const out = await sendIf(
    db.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: `SET ${['#updatedAt = :now', ...fields.sets].join(', ')}`,
        ConditionExpression: '#updatedAt = :expected',
        ExpressionAttributeNames: { ...fields.names, '#updatedAt': 'updatedAt' },
        // Within the same millisecond the version must still move, or a second writer would pass too.
        ExpressionAttributeValues: { ...fields.values, ':expected': expectedUpdatedAt, ':now': Math.max(now, expectedUpdatedAt + 1) },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return (out?.Attributes as T | undefined) ?? null;
}

/** `SET` assignments (`#f0 = :v0`, ...) of the defined fields of `changes`, with their names and values. */
export function fieldAssignments(changes: Readonly<Record<string, unknown>>): {
  sets: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
  return {
    sets: entries.map((_, i) => `#f${i} = :v${i}`),
    names: Object.fromEntries(entries.map(([field], i) => [`#f${i}`, field])),
    values: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
  };
}
