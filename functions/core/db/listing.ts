import { decodeCursor, encodeCursor, type Page } from './cursor.ts';
import { readQuery, type Db } from './dynamo.ts';
import { ValidationError } from '../errors.ts';

/** Items a filtered listing reads per Query call, and calls per request before it answers with a cursor. */
const FILTERED_PAGE_ITEMS = 100;
const MAX_CALLS_PER_PAGE = 10;

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
 * ended). It reads one item past the page, so the last page says it is the last. Filtered, it
 * reads in batches and, when a rare filter leaves the page short after MAX_CALLS_PER_PAGE calls,
 * answers with what it found and a cursor where it stopped rather than running into the timeout.
 */
export async function listPage<T extends object>(db: Db, listing: IndexListing, limit: number, cursor: string | null | undefined): Promise<Page<T>> {
  const filtered = listing.filter !== undefined;
  const read = await readQuery<T>(
    db,
    {
      TableName: listing.table,
      IndexName: listing.index,
      KeyConditionExpression: '#partition = :partition',
      ...(filtered ? { FilterExpression: listing.filter!.expression } : {}),
      ExpressionAttributeNames: { '#partition': listing.partitionKey, ...listing.filter?.names },
      ExpressionAttributeValues: { ':partition': listing.partitionValue, ...listing.filter?.values },
      ScanIndexForward: !listing.newestFirst,
    },
    { max: limit + 1, start: startKeyOf(listing, cursor), maxCalls: MAX_CALLS_PER_PAGE, ...(filtered ? { pageLimit: () => FILTERED_PAGE_ITEMS } : {}) },
  );
  if (read.items.length <= limit) return { items: read.items, nextCursor: encodeCursor(read.lastKey) };
  const items = read.items.slice(0, limit);
  return { items, nextCursor: encodeCursor(positionOf(listing, items[items.length - 1]!)) };
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
