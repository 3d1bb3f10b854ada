import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BlobStore } from '../core/blobs.ts';
import type { Clock } from '../core/clock.ts';
import type { Page } from '../core/db/cursor.ts';
import { countItems, type Db, writeIf, writeBatch, queryItems, sendIf } from '../core/db/dynamo.ts';
import { listPage, updateListedFields, type IndexListing, type PageRequest } from '../core/db/listing.ts';
import { createOwnerCounts } from '../core/db/owner-count.ts';
import { createUniqueClaims } from '../core/db/unique-claim.ts';
import { ConflictError } from '../core/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import {
  INLINE_SOURCE_BYTES,
  MAX_SERVERS_PER_OWNER,
  type McpServerRecord,
  type McpVersion,
  type McpVersionRecord,
  type McpVersionSummary,
} from './mcp.schema.ts';

/** What a new version is made of; the store adds its number, size, hash and where the source lives. */
export interface VersionDraft {
  readonly createdAt: number;
  readonly createdBy: string;
  readonly changeNote: string;
  readonly rollbackOf: number | null;
  readonly tools: readonly string[];
  readonly sourceCode: string;
}

/** Fields of a server that change without a new version. */
export type ServerFieldChanges = Partial<Pick<McpServerRecord, 'description' | 'visibility' | 'sourceVisibility' | 'authorPricing'>>;

/**
 * MCP servers (`mcp-servers`), their names (`mcp-server-names`, `{ownerId}#{serverName}` ->
 * serverId, so names are unique per owner; claimed by the protocol of `core/db/unique-claim.ts`) and their append-only versions (`mcp-versions`, keyed by
 * serverId and version number).
 *
 * Version numbers without transactions: the versions table is the truth. A writer reads the
 * highest version (a strongly consistent Query, newest first, Limit 1), writes version
 * highest + 1 with `attribute_not_exists` on the key, and on a conflict re-reads and retries
 * (bounded, with jitter). A number is therefore never written twice, and since versions are never
 * removed singly, the numbers have no gaps. Only then does the writer advance the server record
 * (`latestVersion`, `tools`, source hash and size) with the condition `latestVersion < n`: when a
 * higher version already advanced it, the record stays, so the live version is always the highest
 * one and a slower writer can never move it back.
 *
 * A crash (or a lost connection) between the two writes leaves a version written but not live.
 * The next version write repairs it by construction (it numbers from the versions table, not the
 * record), and `repair` (called by the admin reads) advances the record to the highest version.
 * The MCP endpoint runs the version the record names, so such a version goes live at the next
 * admin read or update of the server.
 */
export interface McpServerStore {
  get(serverId: string): Promise<McpServerRecord | null>;
  getByName(ownerId: string, serverName: string): Promise<McpServerRecord | null>;
  /**
   * Takes a place on the owner's count, claims the name, writes version 1, then the server (whose
   * `latestVersion` is 1). 'name-taken' when the owner already has a server with that name, 'limit'
   * when they hold MAX_SERVERS_PER_OWNER.
   */
  create(server: McpServerRecord, first: VersionDraft): Promise<'created' | 'name-taken' | 'limit'>;
  /**
   * Writes the next version and makes it live unless a higher one already is. `server` is the
   * record after the write (null when the server was deleted meanwhile).
   */
  appendVersion(serverId: string, draft: VersionDraft): Promise<{ readonly version: number; readonly server: McpServerRecord | null }>;
  /** Changes fields that need no new version; null when the server no longer exists. */
  updateFields(serverId: string, changes: ServerFieldChanges, now: number): Promise<McpServerRecord | null>;
  /**
   * Removes the server (giving its place on the owner's count back), then its name and its versions
   * (with their source blobs). 'busy' while another create or delete of it is under way.
   */
  delete(server: McpServerRecord): Promise<'deleted' | 'busy'>;
  /** How many servers the owner holds (one read of their counter). */
  countByOwner(ownerId: string): Promise<number>;
  /** A page of an owner's servers, newest first, optionally of one visibility. */
  listByOwner(ownerId: string, filter: { visibility?: 'private' | 'public' | undefined }, page: Omit<PageRequest, 'offset'>): Promise<Page<McpServerRecord>>;
  /** A page of the public servers, newest first. */
  listPublic(page: Omit<PageRequest, 'offset'>): Promise<Page<McpServerRecord>>;
  getVersion(serverId: string, version: number): Promise<McpVersion | null>;
  /** Newest first, without sources. */
  listVersions(serverId: string, limit: number): Promise<McpVersionSummary[]>;
  /** The highest version written, without its source; null when there is none. */
  highestVersion(serverId: string): Promise<McpVersionSummary | null>;
  /** The record with its live version advanced to the highest version written (see above). */
  repair(server: McpServerRecord): Promise<McpServerRecord>;
}

/** How many times a version write retries after another writer took the number. */
const MAX_VERSION_ATTEMPTS = 100;
/** Cached version snapshots (immutable, so never invalidated; bounded by count and source size). */
const VERSION_CACHE_ENTRIES = 200;
const VERSION_CACHE_BYTES = 32 * 1024 * 1024;

const SUMMARY_ATTRIBUTES = ['version', 'createdAt', 'createdBy', 'sizeBytes', 'changeNote', 'rollbackOf', 'tools'] as const;

/** Sets or clears the sparse `publicListing` key so the public index holds exactly the public servers. */
export function withListing(server: McpServerRecord): McpServerRecord {
  const { publicListing: _previous, ...rest } = server;
  return server.visibility === 'public' ? { ...rest, publicListing: 'public' } : rest;
}

function summaryOf(item: Record<string, unknown>): McpVersionSummary {
  return {
    version: Number(item['version']),
    createdAt: Number(item['createdAt']),
    createdBy: String(item['createdBy']),
    sizeBytes: Number(item['sizeBytes']),
    changeNote: String(item['changeNote'] ?? ''),
    rollbackOf: item['rollbackOf'] === null || item['rollbackOf'] === undefined ? null : Number(item['rollbackOf']),
    tools: (item['tools'] as string[] | undefined) ?? [],
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createMcpServerStore(db: Db, blobs: BlobStore, clock: Clock): McpServerStore {
  const servers = db.table('mcp-servers');
  const versions = db.table('mcp-versions');
  const nameKey = (ownerId: string, serverName: string) => `${ownerId}#${serverName}`;
  const cache = new VersionCache(VERSION_CACHE_ENTRIES, VERSION_CACHE_BYTES);

  const get = async (serverId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: servers, Key: { serverId }, ConsistentRead: true }));
    return (out.Item as McpServerRecord | undefined) ?? null;
  };

  const names = createUniqueClaims(db, {
    table: db.table('mcp-server-names'),
    keyAttribute: 'nameKey',
    holderAttribute: 'serverId',
    readHolder: get,
    keyOf: (s) => nameKey(s.ownerId, s.serverName),
  });

  const counts = createOwnerCounts(db, {
    table: db.table('mcp-server-counts'),
    max: MAX_SERVERS_PER_OWNER,
    clock,
    holds: async (ownerId, serverId) => (await get(serverId))?.ownerId === ownerId,
    countHeld: (ownerId) =>
      countItems(db, { TableName: servers, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId } }),
  });
  const listing = (index: 'byOwner' | 'publicServers', partitionKey: string, partitionValue: string, filter?: IndexListing['filter']): IndexListing => ({
    table: servers,
    index,
    partitionKey,
    partitionValue,
    sortKey: 'createdAt',
    itemKey: 'serverId',
    newestFirst: true,
    filter,
  });

  /** The version item for `n`; a large source goes to the blob store first, so an item never points at a missing blob. */
  async function versionItem(serverId: string, n: number, draft: VersionDraft): Promise<McpVersionRecord> {
    const bytes = Buffer.byteLength(draft.sourceCode, 'utf8');
    const sha = sha256Hex(draft.sourceCode);
    let blobKey: string | null = null;
    if (bytes > INLINE_SOURCE_BYTES) {
      // Content-addressed: writers racing for one number, or a rollback copy, write the same bytes under the same key.
      blobKey = `mcp-sources/${serverId}/${sha}.js`;
      await blobs.put(blobKey, draft.sourceCode, 'text/javascript; charset=utf-8');
    }
    return {
      serverId,
      version: n,
      createdAt: draft.createdAt,
      createdBy: draft.createdBy,
      sizeBytes: bytes,
      changeNote: draft.changeNote,
      rollbackOf: draft.rollbackOf,
      tools: [...draft.tools],
      sourceSha256: sha,
      sourceCode: blobKey === null ? draft.sourceCode : null,
      sourceBlobKey: blobKey,
    };
  }

  /** False when version `item.version` already exists. */
  async function putVersion(item: McpVersionRecord): Promise<boolean> {
    return writeIf(db.doc.send(new PutCommand({ TableName: versions, Item: item, ConditionExpression: 'attribute_not_exists(serverId)' })));
  }

  async function highestVersion(serverId: string): Promise<McpVersionSummary | null> {
    const [item] = await queryItems<Record<string, unknown>>(
      db,
      {
        TableName: versions,
        KeyConditionExpression: 'serverId = :s',
        ExpressionAttributeValues: { ':s': serverId },
        ScanIndexForward: false,
        ConsistentRead: true,
        ...projection(),
      },
      1,
    );
    return item === undefined ? null : summaryOf(item);
  }

  /** Makes version `n` live unless the record already holds `n` or a higher one; the record after. */
  async function advance(
    serverId: string,
    n: number,
    live: { tools: readonly string[]; sourceSha256: string; sizeBytes: number },
    now: number,
  ): Promise<McpServerRecord | null> {
    const out = await sendIf(
      db.doc.send(
        new UpdateCommand({
          TableName: servers,
          Key: { serverId },
          UpdateExpression: 'SET #latest = :n, #tools = :tools, #sha = :sha, #size = :size, #updated = :now',
          ConditionExpression: 'attribute_exists(serverId) AND #latest < :n',
          ExpressionAttributeNames: {
            '#latest': 'latestVersion',
            '#tools': 'tools',
            '#sha': 'sourceSha256',
            '#size': 'sourceSizeBytes',
            '#updated': 'updatedAt',
          },
          ExpressionAttributeValues: { ':n': n, ':tools': [...live.tools], ':sha': live.sourceSha256, ':size': live.sizeBytes, ':now': now },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out === null ? get(serverId) : (out.Attributes as McpServerRecord);
  }

  async function deleteVersions(serverId: string): Promise<void> {
    const blobKeys = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.doc.send(
        new QueryCommand({
          TableName: versions,
          KeyConditionExpression: 'serverId = :s',
          ExpressionAttributeValues: { ':s': serverId },
          ProjectionExpression: '#v, #blob',
          ExpressionAttributeNames: { '#v': 'version', '#blob': 'sourceBlobKey' },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      const items = out.Items ?? [];
      for (const item of items) if (typeof item['sourceBlobKey'] === 'string') blobKeys.add(item['sourceBlobKey']);
      await writeBatch(
        db,
        versions,
        items.map((item) => ({ DeleteRequest: { Key: { serverId, version: item['version'] } } })),
      );
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    for (const key of blobKeys) await blobs.delete(key);
  }

  async function getVersion(serverId: string, version: number): Promise<McpVersion | null> {
    const cached = cache.get(serverId, version);
    if (cached !== undefined) return cached;
    const out = await db.doc.send(new GetCommand({ TableName: versions, Key: { serverId, version }, ConsistentRead: true }));
    const item = out.Item as McpVersionRecord | undefined;
    if (item === undefined) return null;
    let sourceCode = item.sourceCode;
    if (sourceCode === null || sourceCode === undefined) {
      const blob = item.sourceBlobKey ? await blobs.get(item.sourceBlobKey) : null;
      if (blob === null) throw new Error(`source of ${serverId} version ${version} is missing from the blob store`);
      sourceCode = blob.toString('utf8');
    }
    const { sourceBlobKey: _key, ...rest } = item;
    const full: McpVersion = { ...rest, rollbackOf: item.rollbackOf ?? null, changeNote: item.changeNote ?? '', sourceCode };
    cache.set(full);
    return full;
  }

  return {
    get,
    highestVersion,
    getByName: (ownerId, serverName) => names.holderOf(nameKey(ownerId, serverName)),
    async create(server, first) {
      const claim = { key: nameKey(server.ownerId, server.serverName), holderId: server.serverId, claimedAt: clock.now() };
      // The place first (a refusal at the limit writes nothing else), then the name, then the versions and the record.
      const created = await counts.add(server.ownerId, server.serverId, async () => {
        const claimed = await names.claimFor(claim, async () => {
          const item = await versionItem(server.serverId, 1, first);
          // The id is new and random, so version 1 is free; the condition still guards the invariant.
          if (!(await putVersion(item))) throw new ConflictError(`Version 1 of ${server.serverId} already exists.`);
          const record = withListing({ ...server, latestVersion: 1, tools: item.tools, sourceSha256: item.sourceSha256, sourceSizeBytes: item.sizeBytes });
          await db.doc.send(new PutCommand({ TableName: servers, Item: record, ConditionExpression: 'attribute_not_exists(serverId)' }));
          return true as const;
        });
        return claimed === true;
      });
      if (created === true) return 'created';
      // 'busy' would need another operation on this new random id: reported as a name conflict, as a false is.
      return created === 'limit' ? 'limit' : 'name-taken';
    },
    async appendVersion(serverId, draft) {
      // The source (and its blob, when large) does not depend on the number: prepared once.
      const prepared = await versionItem(serverId, 0, draft);
      for (let attempt = 0; attempt < MAX_VERSION_ATTEMPTS; attempt++) {
        const n = ((await highestVersion(serverId))?.version ?? 0) + 1;
        const item = { ...prepared, version: n };
        if (await putVersion(item)) {
          const server = await advance(serverId, n, { tools: item.tools, sourceSha256: item.sourceSha256, sizeBytes: item.sizeBytes }, draft.createdAt);
          return { version: n, server };
        }
        // Another writer took n: back off a little (more after each loss) and number again.
        await sleep(Math.random() * Math.min(100, 2 + 2 ** Math.min(attempt, 6)));
      }
      throw new ConflictError(`Too many concurrent changes to MCP server ${serverId}; retry.`);
    },
    updateFields: (serverId, changes, now) => updateListedFields<McpServerRecord>(db, servers, { serverId }, changes, now),
    async delete(server) {
      // The record first: from then on the server is gone for every reader, and version writes
      // still in flight cannot make it live again (advancing needs the record). Its place on the
      // owner's count is given back with it.
      const removed = await counts.remove(server.ownerId, server.serverId, () =>
        writeIf(db.doc.send(new DeleteCommand({ TableName: servers, Key: { serverId: server.serverId }, ConditionExpression: 'attribute_exists(serverId)' }))),
      );
      if (removed === 'busy') return 'busy';
      // Also when a concurrent delete removed the record first: releasing the name and the versions is idempotent.
      await names.releaseHeld(nameKey(server.ownerId, server.serverName), server.serverId);
      await deleteVersions(server.serverId);
      return 'deleted';
    },
    countByOwner: (ownerId) => counts.count(ownerId),
    listByOwner(ownerId, filter, page) {
      const byVisibility =
        filter.visibility === undefined
          ? undefined
          : { expression: '#visibility = :visibility', names: { '#visibility': 'visibility' }, values: { ':visibility': filter.visibility } };
      return listPage<McpServerRecord>(db, listing('byOwner', 'ownerId', ownerId, byVisibility), page.limit, page.cursor);
    },
    // The sparse index holds exactly the public servers, so its pages need no filter.
    listPublic: (page) => listPage<McpServerRecord>(db, listing('publicServers', 'publicListing', 'public'), page.limit, page.cursor),
    getVersion,
    async listVersions(serverId, limit) {
      const items = await queryItems<Record<string, unknown>>(
        db,
        {
          TableName: versions,
          KeyConditionExpression: 'serverId = :s',
          ExpressionAttributeValues: { ':s': serverId },
          ScanIndexForward: false,
          ConsistentRead: true,
          ...projection(),
        },
        limit,
      );
      return items.map(summaryOf);
    },
    async repair(server) {
      const top = await highestVersion(server.serverId);
      if (top === null || top.version <= server.latestVersion) return server;
      const full = await getVersion(server.serverId, top.version);
      if (full === null) return server;
      return (
        (await advance(server.serverId, top.version, { tools: full.tools, sourceSha256: full.sourceSha256, sizeBytes: full.sizeBytes }, clock.now())) ?? server
      );
    },
  };
}

/** Projection of a version item without its source (names aliased: several are reserved words). */
function projection() {
  return {
    ProjectionExpression: SUMMARY_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(SUMMARY_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
  };
}

/** Least-recently-used snapshots by (serverId, version); safe because versions never change. */
class VersionCache {
  private readonly entries = new Map<string, McpVersion>();
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  get(serverId: string, version: number): McpVersion | undefined {
    const key = `${serverId}#${version}`;
    const found = this.entries.get(key);
    if (found === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, found);
    return found;
  }

  set(entry: McpVersion): void {
    const key = `${entry.serverId}#${entry.version}`;
    if (this.entries.has(key) || entry.sizeBytes > this.maxBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.sizeBytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.bytes -= this.entries.get(oldest)!.sizeBytes;
      this.entries.delete(oldest);
    }
  }
}
