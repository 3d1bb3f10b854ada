import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../../../lib/manifest/tables.ts';
import type { Config } from '../config.ts';

/** DynamoDB access shared by every store: one document client and the physical table names. */
export interface Db {
  readonly doc: DynamoDBDocumentClient;
  table(name: TableName): string;
}

export function physicalTableName(prefix: string, name: TableName): string {
  return `${prefix}${name}`;
}

export function createDb(config: Pick<Config, 'AWS_REGION' | 'TABLE_PREFIX' | 'DYNAMODB_ENDPOINT'>): Db {
  const client = new DynamoDBClient({
    region: config.AWS_REGION,
    ...(config.DYNAMODB_ENDPOINT
      ? { endpoint: config.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, table: (name) => physicalTableName(config.TABLE_PREFIX, name) };
}

/**
 * Runs a conditional write: true when it was applied, false when its condition did not hold (the
 * invariant said no), any other failure rethrown. The one place that turns "condition failed" into
 * an answer.
 */
export async function writeIf(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

/** True for the error DynamoDB returns when a ConditionExpression does not hold. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * The items of a Query, page by page, until the index is read or `max` items came back (each page
 * asks for no more than is still missing). For bounded reads: an owner's resources, a listing page.
 */
export async function queryItems<T>(db: Db, input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>, max = Number.POSITIVE_INFINITY): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const remaining = max - items.length;
    const out = await db.doc.send(new QueryCommand({ ...input, ...(Number.isFinite(remaining) ? { Limit: remaining } : {}), ExclusiveStartKey: start }));
    items.push(...((out.Items ?? []) as T[]));
    start = out.LastEvaluatedKey;
  } while (start !== undefined && items.length < max);
  return items;
}
