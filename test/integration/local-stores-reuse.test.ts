/**
 * A stores' process kept between starts (startLocalStores `keep`, what the test harness does with
 * its hundred platforms a run) must start each time as a new one would: this start's data
 * directory only, this start's credentials only, and never handed over once it has died.
 */
import { DynamoDBClient, GetItemCommand, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forkLocalStoresProcess, startLocalStores, type LocalStores, type StoresLayout } from '../../lib/local/stores.ts';

const LAYOUT: StoresLayout = {
  prefix: 'reuse-',
  tables: [{ name: 'items', partitionKey: 'id' }],
  buckets: [{ name: 'files', purpose: 'objects written by the first start' }],
};

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stores-reuse-'));
  dirs.push(dir);
  return dir;
}

function dynamo(stores: LocalStores, credentials = stores.credentials): DynamoDBClient {
  return new DynamoDBClient({ region: 'us-east-1', endpoint: stores.dynamoEndpoint, credentials, maxAttempts: 1 });
}

function s3(stores: LocalStores, credentials = stores.credentials): S3Client {
  return new S3Client({ region: 'us-east-1', endpoint: stores.s3Endpoint, forcePathStyle: true, credentials, maxAttempts: 1 });
}

/** Starts the stores on a new data directory, keeping the process at close; resolves the kept process through `kept`. */
async function startKept(child: ChildProcess): Promise<{ stores: LocalStores; kept: Promise<ChildProcess> }> {
  let onKept = (_child: ChildProcess): void => undefined;
  const kept = new Promise<ChildProcess>((resolve) => (onKept = resolve));
  const stores = await startLocalStores(await dataDir(), LAYOUT, child, onKept);
  return { stores, kept };
}

describe('a stores process kept between starts', () => {
  it("starts again on the new data directory only, with the new start's credentials only", async () => {
    // Prepare: a first start writes an item and an object, and is closed with its process kept
    const child = await forkLocalStoresProcess();
    children.push(child);
    const first = await startKept(child);
    await dynamo(first.stores).send(new PutItemCommand({ TableName: 'reuse-items', Item: { id: { S: 'first' } } }));
    await s3(first.stores).send(new PutObjectCommand({ Bucket: 'reuse-files', Key: 'first.txt', Body: 'first' }));
    const firstCredentials = first.stores.credentials;
    await first.stores.close();
    const kept = await first.kept;

    // Act
    const second = await startKept(kept);

    // Assess: the same process, new credentials, an empty layout of its own
    expect(kept.pid).toBe(child.pid);
    expect(second.stores.credentials.accessKeyId).not.toBe(firstCredentials.accessKeyId);
    const tables = await dynamo(second.stores).send(new ListTablesCommand({}));
    expect(tables.TableNames).toEqual(['reuse-items']);
    const item = await dynamo(second.stores).send(new GetItemCommand({ TableName: 'reuse-items', Key: { id: { S: 'first' } } }));
    expect(item.Item).toBeUndefined();
    const objects = await s3(second.stores).send(new ListObjectsV2Command({ Bucket: 'reuse-files' }));
    expect(objects.KeyCount).toBe(0);
    await expect(dynamo(second.stores, firstCredentials).send(new ListTablesCommand({}))).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
    await expect(s3(second.stores, firstCredentials).send(new ListObjectsV2Command({ Bucket: 'reuse-files' }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 403 },
    });
    await second.stores.close();
  });

  it('is not handed over when it dies, and a start given a dead process fails instead of waiting', async () => {
    // Prepare: a process that dies while its start runs
    const child = await forkLocalStoresProcess();
    children.push(child);
    const started = await startKept(child);
    let handedOver = false;
    void started.kept.then(() => (handedOver = true));
    child.kill('SIGKILL');

    // Act
    await started.stores.close();
    const restart = startLocalStores(await dataDir(), LAYOUT, child);

    // Assess
    expect(handedOver).toBe(false);
    await expect(restart).rejects.toThrow('The local stores process exited before it was ready.');
  });
});
