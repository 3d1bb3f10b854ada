import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { readQuery, writeBatch, type BatchWriteRequest, type Db } from '../core/db/dynamo.ts';
import type { SearchPartition } from './search-index.ts';

/** A document as stored: its group's fields travel with it, so a partition is rebuilt from one Query. */
export interface StoredDocument {
  readonly group: string;
  readonly id: string;
  readonly text: string;
  readonly fields: Readonly<Record<string, string>>;
  /** Present when an embedder indexed it. */
  readonly vector?: Float32Array;
}

/**
 * The documents of every partition, and each partition's version. DynamoDB is the truth; the
 * in-memory engine of a process is a cache of one version of a partition (search-engine.ts), so
 * any number of processes (Lambda containers) can serve queries and writes.
 */
export interface SearchStore {
  /** The partition's version: bumped after each change; 0 before the first. */
  version(partition: SearchPartition): Promise<number>;
  /** Every document of the partition, with the version it was read at or after. */
  readPartition(partition: SearchPartition): Promise<{ version: number; documents: StoredDocument[] }>;
  /** Writes the group's documents, removes its others, bumps the version; answers the new version. */
  replaceGroup(partition: SearchPartition, group: string, documents: readonly StoredDocument[]): Promise<number>;
  /** Removes the documents of every group whose key starts with `prefix` (`exact`: only the group `prefix`); answers the groups removed and the new version. */
  deleteGroups(partition: SearchPartition, prefix: string, exact: boolean): Promise<{ groups: string[]; version: number }>;
}

interface DocumentItem {
  readonly partition: string;
  readonly docKey: string;
  readonly group: string;
  readonly id: string;
  readonly text: string;
  readonly fields: Record<string, string>;
  readonly vector?: Uint8Array;
}

/** `{index}#{owner}`: one DynamoDB partition key per search partition. */
export function partitionKey(partition: SearchPartition): string {
  return `${partition.index}#${partition.owner}`;
}

/**
 * The document's sort key. The group is percent-encoded, which maps each character to a fixed
 * string and never produces a space: a group prefix stays a key prefix (begins_with finds a
 * folder), and the space ends the group, so group `a` never matches the documents of `ab`.
 */
function documentKey(group: string, id: string): string {
  return `${encodeURIComponent(group)} ${id}`;
}

function toBytes(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

function toVector(bytes: Uint8Array): Float32Array {
  // Copied: the SDK's buffer may be a view at an offset that is not a multiple of 4.
  const copy = new Uint8Array(bytes);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

export function createSearchStore(db: Db): SearchStore {
  const documents = db.table('search-documents');
  const partitions = db.table('search-partitions');

  async function bump(partition: SearchPartition): Promise<number> {
    const out = await db.doc.send(
      new UpdateCommand({
        TableName: partitions,
        Key: { partition: partitionKey(partition) },
        UpdateExpression: 'ADD #v :one',
        ExpressionAttributeNames: { '#v': 'version' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.['version'] ?? 0);
  }

  async function version(partition: SearchPartition): Promise<number> {
    const out = await db.doc.send(new GetCommand({ TableName: partitions, Key: { partition: partitionKey(partition) }, ConsistentRead: true }));
    return Number(out.Item?.['version'] ?? 0);
  }

  /** Keys (and groups) of the documents whose sort key starts with `keyPrefix`. */
  async function keysWithPrefix(partition: SearchPartition, keyPrefix: string): Promise<{ docKey: string; group: string }[]> {
    const { items } = await readQuery<{ docKey: string; group: string }>(db, {
      TableName: documents,
      KeyConditionExpression: '#p = :p AND begins_with(#k, :k)',
      ExpressionAttributeNames: { '#p': 'partition', '#k': 'docKey', '#g': 'group' },
      ExpressionAttributeValues: { ':p': partitionKey(partition), ':k': keyPrefix },
      ProjectionExpression: '#k, #g',
      ConsistentRead: true,
    });
    return items;
  }

  return {
    version,

    async readPartition(partition) {
      // The version first: the documents read after it are at least that new, so a cache tagged with
      // it is never newer than it claims (search-engine.ts rebuilds on the next mismatch).
      const at = await version(partition);
      const { items } = await readQuery<DocumentItem>(db, {
        TableName: documents,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': 'partition' },
        ExpressionAttributeValues: { ':p': partitionKey(partition) },
        ConsistentRead: true,
      });
      return {
        version: at,
        documents: items.map(({ group, id, text, fields, vector }) => ({ group, id, text, fields, ...(vector ? { vector: toVector(vector) } : {}) })),
      };
    },

    async replaceGroup(partition, group, docs) {
      const pk = partitionKey(partition);
      const existing = await keysWithPrefix(partition, `${encodeURIComponent(group)} `);
      const kept = new Set(docs.map((d) => documentKey(group, d.id)));
      // New documents first, stale ones after: a failure half-way leaves the group searchable
      // (old and new together) rather than missing, and repeating the call completes it.
      const requests: BatchWriteRequest[] = [
        ...docs.map((d) => ({
          PutRequest: {
            Item: {
              partition: pk,
              docKey: documentKey(group, d.id),
              group,
              id: d.id,
              text: d.text,
              fields: { ...d.fields },
              ...(d.vector ? { vector: toBytes(d.vector) } : {}),
            },
          },
        })),
        ...existing.filter((e) => !kept.has(e.docKey)).map((e) => ({ DeleteRequest: { Key: { partition: pk, docKey: e.docKey } } })),
      ];
      await writeBatch(db, documents, requests);
      return bump(partition);
    },

    async deleteGroups(partition, prefix, exact) {
      const pk = partitionKey(partition);
      const found = await keysWithPrefix(partition, exact ? `${encodeURIComponent(prefix)} ` : encodeURIComponent(prefix));
      if (found.length === 0) return { groups: [], version: await version(partition) };
      await writeBatch(
        db,
        documents,
        found.map((e) => ({ DeleteRequest: { Key: { partition: pk, docKey: e.docKey } } })),
      );
      return { groups: [...new Set(found.map((e) => e.group))], version: await bump(partition) };
    },
  };
}
