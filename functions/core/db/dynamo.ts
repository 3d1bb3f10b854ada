import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../area-list.ts';
import { localStoreCredentials } from '../blobs.ts';
import type { Config } from '../config.ts';

/** DynamoDB access shared by every store: one document client and the physical table names. */
export interface Db {
  readonly doc: DynamoDBDocumentClient;
  table(name: TableName): string;
}

export function physicalTableName(prefix: string, name: TableName): string {
  return `${prefix}${name}`;
}

export function createDb(
  config: Pick<Config, 'AWS_REGION' | 'TABLE_PREFIX' | 'DYNAMODB_ENDPOINT' | 'LOCAL_STORES_ACCESS_KEY_ID' | 'LOCAL_STORES_SECRET_ACCESS_KEY'>,
): Db {
  const client = new DynamoDBClient({
    region: config.AWS_REGION,
    // Locally dynalite, behind a front that checks the signature by the credentials of this start.
    ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT, credentials: localStoreCredentials(config) } : {}),
  });
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, table: (name) => physicalTableName(config.TABLE_PREFIX, name) };
}

/**
 * Runs a conditional write: true when it was applied, false when its condition did not hold (the
 * invariant said no), any other failure rethrown. With `sendIf`, the one place that turns
 * "condition failed" into an answer.
 */
export async function writeIf(write: Promise<unknown>): Promise<boolean> {
  return (await sendIf(write.then(() => true))) !== null;
}

/**
 * Runs a conditional write whose output the caller needs (`ReturnValues`): the output when it was
 * applied, null when its condition did not hold, any other failure rethrown.
 */
export async function sendIf<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailed(error)) return null;
    throw error;
  }
}

/** True for the error DynamoDB returns when a ConditionExpression does not hold. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * One strongly consistent read of one item by its key, described rather than sent, so a store can
 * run it alone (`readItem`) and a caller that needs several items at once can run them together in
 * one BatchGetItem (`readItems`): one round trip and one request for the store to handle, not N.
 */
export interface ItemRead<T> {
  readonly table: string;
  readonly key: Readonly<Record<string, string | number>>;
  /** The stored item as the store's record type. */
  readonly as: (item: Record<string, unknown>) => T;
}

export async function readItem<T>(db: Db, read: ItemRead<T>): Promise<T | null> {
  const out = await db.doc.send(new GetCommand({ TableName: read.table, Key: read.key, ConsistentRead: true }));
  return out.Item === undefined ? null : read.as(out.Item);
}

type ReadResults<R extends readonly ItemRead<unknown>[]> = { -readonly [K in keyof R]: R[K] extends ItemRead<infer T> ? T | null : never };

/** Attempts at the keys DynamoDB leaves unprocessed (throttling) before the read fails. */
const BATCH_ATTEMPTS = 5;

/** The most keys one BatchGetItem may ask for. */
const BATCH_GET_KEYS = 100;

/**
 * Several items in one BatchGetItem (one per 100 keys, sent together), each read strongly
 * consistent, as if each were read with `readItem` at the same moment; null where an item does not
 * exist. Keys DynamoDB leaves unprocessed are asked again (bounded, with back-off).
 */
export async function readItems<const R extends readonly ItemRead<unknown>[]>(db: Db, reads: R): Promise<ReadResults<R>> {
  const found = new Map<string, Record<string, unknown>[]>();
  const readBatch = async (batch: readonly ItemRead<unknown>[]) => {
    let pending: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: true }> = {};
    for (const read of batch) (pending[read.table] ??= { Keys: [], ConsistentRead: true }).Keys.push({ ...read.key });
    for (let attempt = 0; Object.keys(pending).length > 0; attempt++) {
      if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchGetItem left keys unprocessed after ${BATCH_ATTEMPTS} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      const out = await db.doc.send(new BatchGetCommand({ RequestItems: pending }));
      for (const [table, items] of Object.entries(out.Responses ?? {})) found.set(table, [...(found.get(table) ?? []), ...items]);
      pending = (out.UnprocessedKeys ?? {}) as typeof pending;
    }
  };
  const batches: ItemRead<unknown>[][] = [];
  for (let i = 0; i < reads.length; i += BATCH_GET_KEYS) batches.push(reads.slice(i, i + BATCH_GET_KEYS));
  await Promise.all(batches.map(readBatch));
  return reads.map((read) => {
    const item = found.get(read.table)?.find((candidate) => Object.entries(read.key).every(([name, value]) => candidate[name] === value));
    return item === undefined ? null : read.as(item);
  }) as ReadResults<R>;
}

/** One put or delete of a BatchWriteItem, in the document client's form. */
export type BatchWriteRequest = { readonly PutRequest: { Item: Record<string, unknown> } } | { readonly DeleteRequest: { Key: Record<string, unknown> } };

/**
 * Puts and deletes on one table, 25 to a BatchWriteItem; requests DynamoDB leaves unprocessed
 * (throttling) are sent again, bounded, with back-off, then the write fails. Not atomic: a failure
 * may leave some requests applied, so callers write in an order that is safe to repeat.
 */
export async function writeBatch(db: Db, table: string, requests: readonly BatchWriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending = requests.slice(i, i + 25);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left requests unprocessed after ${BATCH_ATTEMPTS} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      const out = await db.doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending.map((r) => ({ ...r })) } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as BatchWriteRequest[];
    }
  }
}

/** What `readQuery` read: the items, and where the Query stopped (undefined when it reached the end). */
export interface QueryRead<T> {
  readonly items: T[];
  readonly lastKey: Record<string, unknown> | undefined;
}

export interface QueryBounds {
  /** Stop once this many items came back (the last page may bring more). */
  readonly max?: number;
  readonly start?: Record<string, unknown> | undefined;
  /**
   * The `Limit` of each call, from how many items are still missing and how many calls were made
   * before it (0 for the first); by default exactly the missing ones.
   */
  readonly pageLimit?: (missing: number, call: number) => number;
  /** Stop after this many calls, so a rare filter over a large partition costs a bounded time. */
  readonly maxCalls?: number;
}

/**
 * Reads a Query page by page until `max` items came back, the index ended, or `maxCalls` calls were
 * made. The one Query loop: bounded reads, listing pages and log scans are all made of it.
 */
export async function readQuery<T>(db: Db, input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>, bounds: QueryBounds = {}): Promise<QueryRead<T>> {
  const { max = Number.POSITIVE_INFINITY, pageLimit = (missing: number) => missing, maxCalls = Number.POSITIVE_INFINITY } = bounds;
  const items: T[] = [];
  let start = bounds.start;
  for (let calls = 0; calls < maxCalls; calls++) {
    const limit = pageLimit(max - items.length, calls);
    const out = await db.doc.send(new QueryCommand({ ...input, ...(Number.isFinite(limit) ? { Limit: limit } : {}), ExclusiveStartKey: start }));
    items.push(...((out.Items ?? []) as T[]));
    start = out.LastEvaluatedKey;
    if (start === undefined || items.length >= max) break;
  }
  return { items, lastKey: start };
}

/**
 * The items of a Query, page by page, until the index is read or `max` items came back (each page
 * asks for no more than is still missing). For bounded reads: an owner's resources, a listing page.
 */
export async function queryItems<T>(db: Db, input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>, max = Number.POSITIVE_INFINITY): Promise<T[]> {
  return (await readQuery<T>(db, input, { max })).items;
}

/** How many items a Query matches, counted by DynamoDB page by page (`Select: COUNT`, no items read back). */
export async function countItems(db: Db, input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit' | 'Select'>): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(new QueryCommand({ ...input, Select: 'COUNT', ExclusiveStartKey: start }));
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start !== undefined);
  return count;
}
