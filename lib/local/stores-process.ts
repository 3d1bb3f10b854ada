/**
 * The local stores' own process: dynalite and s3rver, started by `startLocalStores` with `fork`.
 * They are CPU-heavy JavaScript servers; in the platform's process they shared one event loop with
 * HTTP, the handlers and the AWS SDK, and throughput stopped growing at 8 concurrent requests.
 *
 * Protocol (IPC, in order): the parent sends `start` with the data directory and the tables and
 * buckets to create when missing; this process answers `ready` with its ports once they exist,
 * forwards each s3rver notification as `s3-event`, answers `flush` with `flushed` (so the parent
 * knows every notification sent before has arrived), and on `close` stops both servers and exits.
 * It exits as well when the parent goes away, so a crashed platform leaves no servers behind.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { CreateTableInput, DescribeTableOutput, ListTablesOutput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';

export type StoresRequest =
  | {
      readonly type: 'start';
      readonly dataDir: string;
      /** Created when missing, before `ready`. */
      readonly tables: readonly CreateTableInput[];
      /** Bucket names, likewise. */
      readonly buckets: readonly string[];
    }
  | { readonly type: 'flush'; readonly id: number }
  | { readonly type: 'close' };

export type StoresMessage =
  | { readonly type: 'ready'; readonly dynamoPort: number; readonly s3Port: number }
  | { readonly type: 's3-event'; readonly event: unknown }
  | { readonly type: 'flushed'; readonly id: number }
  | { readonly type: 'failed'; readonly message: string };

function send(message: StoresMessage): void {
  process.send?.(message);
}

async function start({ dataDir, tables, buckets }: Extract<StoresRequest, { type: 'start' }>) {
  const dynamoDir = join(dataDir, 'dynamodb');
  const s3Dir = join(dataDir, 's3');
  // The build's seed (forkStoresProcess): its dynalite directory and the tables file it was made from.
  const [seedDynamo, seedTables] = process.argv.slice(2);
  if (seedDynamo !== undefined && seedTables !== undefined && !existsSync(dynamoDir)) await copySeed(seedDynamo, seedTables, dynamoDir, tables);
  await mkdir(dynamoDir, { recursive: true });
  await mkdir(s3Dir, { recursive: true });
  const dynamo = dynalite({ path: dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(0, '127.0.0.1', () => resolve());
  });
  const dynamoPort = (dynamo.address() as AddressInfo).port;
  // s3rver creates the buckets that are missing as it starts.
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  const [s3Address] = await Promise.all([s3.run() as Promise<AddressInfo>, ensureTables(dynamoPort, tables)]);
  // Emitted before s3rver answers the write, so it is sent before the writer can see success.
  s3.on('event', (event: unknown) => send({ type: 's3-event', event }));
  send({ type: 'ready', dynamoPort, s3Port: s3Address.port });
  return async () => {
    await s3.close();
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
  };
}

/**
 * Copies the build's seed into an empty data directory when it holds exactly `tables`: dynalite
 * took some 200-400 ms of this machine's start to create the platform's 40 tables one call at a
 * time, and copying the few files of a LevelDB directory made by the same calls takes a few.
 * Into a directory of its own first, renamed into place: a copy cut short leaves no half database.
 */
async function copySeed(from: string, tablesFile: string, dynamoDir: string, tables: readonly CreateTableInput[]): Promise<void> {
  const recorded = await readFile(tablesFile, 'utf8').catch(() => null);
  if (recorded !== JSON.stringify(tables)) return;
  const partial = `${dynamoDir}.seeding-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  // LevelDB's directory is flat.
  await Promise.all((await readdir(from)).map((file) => copyFile(join(from, file), join(partial, file))));
  await rename(partial, dynamoDir);
}

/**
 * Creates the tables that do not exist yet, here rather than in the platform: this process has
 * been waiting while the platform loads its modules, and the platform then finds its tables ready
 * instead of spending its own start on some 40 creations (300-400 ms on an empty data
 * directory) or, on a restart, on the listing. The listing also opens dynalite's LevelDB, which it
 * does on the first call: that cost leaves the platform's first call as well.
 */
async function ensureTables(port: number, tables: readonly CreateTableInput[]): Promise<void> {
  const existing = new Set<string>();
  let ExclusiveStartTableName: string | undefined;
  do {
    const page = await callDynalite<ListTablesOutput>(port, 'ListTables', { ExclusiveStartTableName });
    for (const name of page.TableNames ?? []) existing.add(name);
    ExclusiveStartTableName = page.LastEvaluatedTableName;
  } while (ExclusiveStartTableName !== undefined);
  const missing = tables.filter((table) => !existing.has(table.TableName!));
  await Promise.all(missing.map((table) => callDynalite(port, 'CreateTable', table)));
  // dynalite answers CreateTable while the table is still CREATING, and refuses writes until it
  // turns ACTIVE a tick later (later still on a loaded machine).
  await Promise.all(
    missing.map(async ({ TableName }) => {
      for (let attempt = 0; ; attempt += 1) {
        const { Table } = await callDynalite<DescribeTableOutput>(port, 'DescribeTable', { TableName });
        if (Table?.TableStatus === 'ACTIVE') return;
        if (attempt >= 200) throw new Error(`Table ${TableName} is still ${Table?.TableStatus ?? 'missing'} after creation.`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }),
  );
}

/**
 * One DynamoDB call to dynalite over loopback, in the JSON protocol the SDK speaks; without the
 * SDK, which this process does not otherwise load. dynalite requires a request to look signed and
 * never checks the signature.
 */
function callDynalite<T>(port: number, operation: string, input: object): Promise<T> {
  const body = JSON.stringify(input);
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': Buffer.byteLength(body),
          'x-amz-target': `DynamoDB_20120810.${operation}`,
          'x-amz-date': new Date().toISOString().replace(/[-:]|\.\d{3}/g, ''),
          authorization: 'AWS4-HMAC-SHA256 Credential=local/19700101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=none',
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const parsed = JSON.parse(text || '{}') as T & { __type?: string; message?: string };
          if (response.statusCode === 200) resolve(parsed);
          else reject(new Error(`${operation} failed: ${parsed.__type ?? response.statusCode} ${parsed.message ?? ''}`.trim()));
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

let stop: (() => Promise<void>) | null = null;
process.on('message', (request: StoresRequest) => {
  if (request.type === 'start') {
    start(request).then(
      (stopServers) => void (stop = stopServers),
      (error: unknown) => {
        send({ type: 'failed', message: (error as Error).message });
        process.exit(1);
      },
    );
  } else if (request.type === 'flush') {
    send({ type: 'flushed', id: request.id });
  } else {
    void (stop?.() ?? Promise.resolve()).finally(() => process.exit(0));
  }
});
process.on('disconnect', () => void (stop?.() ?? Promise.resolve()).finally(() => process.exit(0)));
