import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, type AttributeDefinition } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import type { BucketSpec, TableSpec } from '../manifest/types.ts';

export interface LocalStores {
  readonly dynamoEndpoint: string;
  readonly s3Endpoint: string;
  /**
   * Calls `listener` with s3rver's S3-style notification (`{ Records: [...] }`) of every object
   * written or removed, before s3rver answers the request. Returns the unsubscribe.
   */
  onS3Event(listener: (event: unknown) => void): () => void;
  close(): Promise<void>;
}

/** Starts dynalite and s3rver on free loopback ports, persisting under `dataDir`. */
export async function startLocalStores(dataDir: string): Promise<LocalStores> {
  const dynamoDir = join(dataDir, 'dynamodb');
  const s3Dir = join(dataDir, 's3');
  await mkdir(dynamoDir, { recursive: true });
  await mkdir(s3Dir, { recursive: true });

  const dynamo = dynalite({ path: dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(0, '127.0.0.1', () => resolve());
  });
  const dynamoPort = (dynamo.address() as AddressInfo).port;

  const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true });
  const s3Address = (await s3.run()) as AddressInfo;

  return {
    dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`,
    s3Endpoint: `http://127.0.0.1:${s3Address.port}`,
    onS3Event(listener) {
      s3.on('event', listener);
      return () => void s3.off('event', listener);
    },
    async close() {
      await s3.close();
      await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    },
  };
}

/** Creates the manifest's tables that do not exist yet (dynalite creates them instantly). */
export async function ensureTables(client: DynamoDBClient, prefix: string, tables: readonly TableSpec[]): Promise<void> {
  await Promise.all(tables.map((table) => ensureTable(client, prefix, table)));
}

async function ensureTable(client: DynamoDBClient, prefix: string, table: TableSpec): Promise<void> {
  const TableName = `${prefix}${table.name}`;
  try {
    await client.send(new DescribeTableCommand({ TableName }));
    return;
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
  const keyNames = new Set([table.partitionKey, ...(table.sortKey ? [table.sortKey] : [])]);
  for (const index of table.indexes ?? []) {
    keyNames.add(index.partitionKey);
    if (index.sortKey) keyNames.add(index.sortKey);
  }
  const numberKeys: readonly string[] = table.numberKeys ?? [];
  const AttributeDefinitions: AttributeDefinition[] = [...keyNames].map((AttributeName) => ({
    AttributeName,
    AttributeType: numberKeys.includes(AttributeName) ? 'N' : 'S',
  }));
  const keySchema = (pk: string, sk?: string) => [
    { AttributeName: pk, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk, KeyType: 'RANGE' as const }] : []),
  ];
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions,
      KeySchema: keySchema(table.partitionKey, table.sortKey),
      GlobalSecondaryIndexes: table.indexes?.length
        ? table.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: { ProjectionType: 'ALL' },
          }))
        : undefined,
    }),
  );
  // dynalite answers CreateTable while the table is still CREATING, and refuses writes until it
  // turns ACTIVE a tick later (later still on a loaded machine): wait, so callers can write at once.
  for (let attempt = 0; ; attempt += 1) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (attempt >= 200) throw new Error(`Table ${TableName} is still ${Table?.TableStatus ?? 'missing'} after creation.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function ensureBuckets(client: S3Client, prefix: string, buckets: readonly BucketSpec[]): Promise<void> {
  for (const bucket of buckets) {
    const Bucket = `${prefix}${bucket.name}`;
    try {
      await client.send(new HeadBucketCommand({ Bucket }));
    } catch {
      await client.send(new CreateBucketCommand({ Bucket }));
    }
  }
}
