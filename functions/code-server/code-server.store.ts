import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../core/clock.ts';
import { queryItems, readItem, writeIf, type Db } from '../core/db/dynamo.ts';
import type { CodeServerRecord } from './code-server.schema.ts';

/** Users' code servers (table `code-servers`), one item per user; `byBilling` lists those accruing running time. */
export interface CodeServerStore {
  get(userId: string): Promise<CodeServerRecord | null>;
  /**
   * Writes `next` if the stored item is still the one read (`expected`'s version; none when null):
   * false when another write came first, so two requests or ticks never both act on one state.
   */
  replace(expected: CodeServerRecord | null, next: Omit<CodeServerRecord, 'version' | 'updatedAt'>): Promise<CodeServerRecord | null>;
  /** Those whose running time is billed (launching, running). */
  listBilled(): Promise<CodeServerRecord[]>;
}

export function createCodeServerStore(db: Db, clock: Clock): CodeServerStore {
  const table = db.table('code-servers');
  return {
    get: (userId) => readItem(db, { table, key: { userId }, as: (item) => item as unknown as CodeServerRecord }),
    async replace(expected, next) {
      const { billing: _billing, ...rest } = next;
      const record: CodeServerRecord = {
        ...rest,
        ...(next.status === 'launching' || next.status === 'running' ? { billing: 'active' as const } : {}),
        version: (expected?.version ?? 0) + 1,
        updatedAt: clock.now(),
      };
      const written = await writeIf(
        db.doc.send(
          new PutCommand({
            TableName: table,
            Item: record,
            ...(expected === null
              ? { ConditionExpression: 'attribute_not_exists(userId)' }
              : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': expected.version } }),
          }),
        ),
      );
      return written ? record : null;
    },
    listBilled: () =>
      queryItems<CodeServerRecord>(db, {
        TableName: table,
        IndexName: 'byBilling',
        KeyConditionExpression: 'billing = :a',
        ExpressionAttributeValues: { ':a': 'active' },
      }),
  };
}
