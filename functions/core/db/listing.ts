import { UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, type Page } from './cursor.ts';
import { readQuery, sendIf, type Db } from './dynamo.ts';
import { ValidationError } from '../errors.ts';

/**
 * Bounds of one request's reads: calls per page before a filtered listing answers with what it
 * found and a cursor, the most a filtered call asks for, and the calls an offset may take to skip.
 */
const MAX_CALLS_PER_PAGE = 10;
const FILTERED_PAGE_ITEMS = 100;
const MAX_SKIP_CALLS = 20;

/** Where a page starts: after `cursor` (a `nextCursor` of an earlier page), then past `offset` matching items. */
export interface PageRequest {
  readonly limit: number;
  readonly cursor?: string | null | undefined;
  readonly offset?: number | undefined;
}

/**
 * One partition of an index, listed page by page: an owner's resources (`byOwner`), the public
 * ones (a sparse index whose partition key only listed items carry), a user's tokens.
 */
export interface IndexListing {
  /** The physical table name. */
  readonly table: string;
  readonly index: string;
  readonly partitionKey: string;
  readonly partitionValue: string;
  /** The index's sort key (a number: a time). */
  readonly sortKey: string;
  /** The table's key attribute; with the index keys it makes a position in the index. */
  readonly itemKey: string;
  /** Newest (highest sort key) first; oldest first otherwise. */
  readonly newestFirst: boolean;
  /** Narrows the listing on DynamoDB's side; its values must not use `:partition`. */
  readonly filter?: { readonly expression: string; readonly names?: Record<string, string>; readonly values: Record<string, unknown> } | undefined;
}

/**
 * A page of `limit` items from `cursor` on, and the cursor of the next one (null when the listing
 * ended), read from DynamoDB a page at a time: what a page costs follows the page, never the size
 * of the partition. It reads one item past the page, so the last page says it is the last.
 *
 * Filtered, each call asks for what is still missing, and twice as much after each call that came
 * back short (DynamoDB applies `Limit` before the filter), up to FILTERED_PAGE_ITEMS: a filter
 * most items pass costs about the page, a rare one at most MAX_CALLS_PER_PAGE calls, after which
 * the page answers with what it found and a cursor where it stopped rather than running into the
 * timeout.
 *
 * `offset` (for APIs whose pagination is an offset) passes over that many matching items first,
 * reading only their keys; it costs reads in proportion to the offset, so it is bounded too: an
 * offset that MAX_SKIP_CALLS calls do not reach is a 400 that points to the cursor, which resumes
 * at the cost of a page.
 */
export async function listPage<T extends object>(
  db: Db,
  listing: IndexListing,
  limit: number,
  cursor: string | null | undefined,
  offset = 0,
): Promise<Page<T>> {
  let start = startKeyOf(listing, cursor);
  if (offset > 0) {
    const skipped = await skip(db, listing, offset, start);
    if (skipped === 'ended') return { items: [], nextCursor: null };
    start = skipped;
  }
  const read = await readQuery<T>(db, queryOf(listing), { max: limit + 1, start, maxCalls: MAX_CALLS_PER_PAGE, pageLimit: callLimit(listing) });
  if (read.items.length <= limit) return { items: read.items, nextCursor: encodeCursor(read.lastKey) };
  const items = read.items.slice(0, limit);
  return { items, nextCursor: encodeCursor(positionOf(listing, items[items.length - 1]!)) };
}

function queryOf(listing: IndexListing): Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'> {
  return {
    TableName: listing.table,
    IndexName: listing.index,
    KeyConditionExpression: '#partition = :partition',
    ...(listing.filter !== undefined ? { FilterExpression: listing.filter.expression } : {}),
    ExpressionAttributeNames: { '#partition': listing.partitionKey, ...listing.filter?.names },
    ExpressionAttributeValues: { ':partition': listing.partitionValue, ...listing.filter?.values },
    ScanIndexForward: !listing.newestFirst,
  };
}

/** The `Limit` of each call: unfiltered, every item read is one of the page; filtered, see `listPage`. */
function callLimit(listing: IndexListing): (missing: number, call: number) => number {
  if (listing.filter === undefined) return (missing) => missing;
  return (missing, call) => Math.min(Math.max(FILTERED_PAGE_ITEMS, missing), missing * 2 ** call);
}

/** The position after the `offset`th matching item from `start`, reading keys only; 'ended' when the listing has fewer. */
async function skip(db: Db, listing: IndexListing, offset: number, start: Record<string, unknown> | undefined) {
  const query = queryOf(listing);
  const read = await readQuery<Record<string, unknown>>(
    db,
    {
      ...query,
      ProjectionExpression: '#partition, #listingSort, #listingItem',
      ExpressionAttributeNames: { ...query.ExpressionAttributeNames, '#listingSort': listing.sortKey, '#listingItem': listing.itemKey },
    },
    { max: offset, start, maxCalls: MAX_SKIP_CALLS, pageLimit: callLimit(listing) },
  );
  if (read.items.length >= offset) return positionOf(listing, read.items[offset - 1]!);
  if (read.lastKey === undefined) return 'ended' as const;
  throw new ValidationError('Invalid query parameters', [`offset: ${offset} is too far to skip in one request; page on with cursor (nextCursor) instead`]);
}

/** The position just after `item` in the index: the table key plus the index key. */
function positionOf(listing: IndexListing, item: object): Record<string, unknown> {
  const attributes = item as Record<string, unknown>;
  return { [listing.itemKey]: attributes[listing.itemKey], [listing.partitionKey]: listing.partitionValue, [listing.sortKey]: attributes[listing.sortKey] };
}

/**
 * A cursor is only accepted by the listing that made it: one of another owner's listing (or a
 * forged one) is a 400 rather than a read of someone else's partition or a DynamoDB error.
 */
function startKeyOf(listing: IndexListing, cursor: string | null | undefined): Record<string, unknown> | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  const expected = [listing.itemKey, listing.partitionKey, listing.sortKey].sort();
  const fits =
    Object.keys(key).sort().join() === expected.join() &&
    typeof key[listing.itemKey] === 'string' &&
    typeof key[listing.sortKey] === 'number' &&
    key[listing.partitionKey] === listing.partitionValue;
  if (!fits) throw new ValidationError('Invalid query parameters', ['cursor: is not a cursor returned by this listing']);
  return key;
}

/**
 * Sets the given fields of an existing record (undefined ones are left alone) and its `updatedAt`,
 * and keeps the sparse `publicListing` key in step with a `visibility` change, so a public index
 * (`listing`) holds exactly the public records. Null when no record has that key.
 */
export async function updateListedFields<T>(
  db: Db,
  table: string,
  key: Readonly<Record<string, string>>,
  changes: Readonly<Record<string, unknown>> & { readonly visibility?: 'public' | 'private' | undefined },
  now: number,
): Promise<T | null> {
  const sets: string[] = ['#updated = :now'];
  const removes: string[] = [];
  const attributeNames: Record<string, string> = { '#updated': 'updatedAt' };
  const values: Record<string, unknown> = { ':now': now };
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    attributeNames[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (changes.visibility !== undefined) {
    attributeNames['#listing'] = 'publicListing';
    if (changes.visibility === 'public') {
      values[':listing'] = 'public';
      sets.push('#listing = :listing');
    } else {
      removes.push('#listing');
    }
  }
  const [keyName] = Object.keys(key);
  attributeNames['#key'] = keyName!;
  const out = await sendIf(
    db.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(#key)',
        ExpressionAttributeNames: attributeNames,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return out === null ? null : (out.Attributes as T);
}
