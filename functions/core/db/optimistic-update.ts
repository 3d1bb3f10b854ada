import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { writeIf, type Db } from './dynamo.ts';

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
