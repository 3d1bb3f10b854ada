import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AttributeDefinition, CreateTableInput } from '@aws-sdk/client-dynamodb';
import type { BucketSpec, TableSpec } from '../manifest/types.ts';
import type { StoreCredentials } from './stores-auth.ts';
import type { StoresMessage, StoresRequest } from './stores-process.ts';
import { forkStoresProcess } from './stores-fork.ts';

export interface LocalStores {
  readonly dynamoEndpoint: string;
  readonly s3Endpoint: string;
  /**
   * What every request to either store must be signed with (SigV4), made anew for each start and
   * known only to the platform's process and the stores' process: the stores' ports refuse
   * anything else, so other local processes and accounts can neither read nor write them.
   */
  readonly credentials: StoreCredentials;
  /**
   * Calls `listener` with s3rver's S3-style notification (`{ Records: [...] }`) of every object
   * written or removed, and `{ bucket }` for a multi-object delete (which s3rver does not notify).
   * Returns the unsubscribe.
   */
  onS3Event(listener: (event: unknown) => void): () => void;
  /**
   * Resolves once every notification of a write that has already been answered has reached the
   * listeners: s3rver sends it before answering, and messages from the stores' process arrive in
   * order, so one round trip is enough.
   */
  flushS3Events(): Promise<void>;
  close(): Promise<void>;
}

/** The tables and buckets the stores hold from their start, physical names `<prefix><name>`. */
export interface StoresLayout {
  readonly prefix: string;
  readonly tables: readonly TableSpec[];
  readonly buckets: readonly BucketSpec[];
}

/** How long the stores' process may take to close before it is killed. */
const CLOSE_GRACE_MS = 10_000;

const STORES_PROCESS_SOURCE = fileURLToPath(new URL('./stores-process.ts', import.meta.url));
/** Our modules the stores' process imports, bundled into it. */
const STORES_PROCESS_MODULES = [STORES_PROCESS_SOURCE, fileURLToPath(new URL('./stores-auth.ts', import.meta.url))];
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The stores' process as plain JavaScript, compiled from its sources when they changed: under
 * `--import tsx` the process took about twice as long to be ready, and it is on the path of every
 * start. Our modules bundled, packages left to Node; written under the project's `.tmp/` so its
 * imports resolve from the project's packages. The built start (build.ts) brings its own and
 * skips this.
 */
async function storesProcessEntry(): Promise<string> {
  const sources = await Promise.all(STORES_PROCESS_MODULES.map((file) => readFile(file, 'utf8')));
  const hash = createHash('sha256');
  for (const source of sources) hash.update(source).update('\0');
  const file = join(REPO_ROOT, '.tmp', `stores-process-${hash.digest('hex').slice(0, 16)}.mjs`);
  if (existsSync(file)) return file;
  // Imported here, not at the top: a start that finds the file compiled never loads esbuild.
  const { build } = await import('esbuild');
  const { outputFiles } = await build({
    entryPoints: [STORES_PROCESS_SOURCE],
    bundle: true,
    packages: 'external',
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  const code = outputFiles[0]?.text;
  if (code === undefined) throw new Error('esbuild produced no stores process');
  await mkdir(dirname(file), { recursive: true });
  // Two starts at once may both compile: each writes its own file and renames it into place.
  const partial = `${file}.${process.pid}.${Date.now()}`;
  await writeFile(partial, code);
  await rename(partial, file);
  return file;
}

/** Forks the stores' process from its sources (compiled on first use), ready for `startLocalStores`. */
export async function forkLocalStoresProcess(): Promise<ChildProcess> {
  return forkStoresProcess(await storesProcessEntry());
}

/**
 * Starts dynalite and s3rver in a process of their own (stores-process.ts) behind free loopback
 * ports that accept only requests signed by `credentials` (made here, per start), persisting
 * under `dataDir`: off the platform's event loop, still started and stopped with it.
 * Resolves once the layout's tables and buckets exist (that process creates those missing).
 * `forked` is that process when the caller forked it ahead (forkStoresProcess, the built start) or
 * kept it from an earlier start. `keep`: close stops the servers and hands the process, idle and
 * alive, to `keep` for another start instead of ending it (the test harness: loading the stores'
 * modules is most of what a start of that process costs); a process that exits or fails to stop
 * cleanly is never handed over.
 */
export async function startLocalStores(
  dataDir: string,
  layout: StoresLayout,
  forked?: ChildProcess,
  keep?: (child: ChildProcess) => void,
): Promise<LocalStores> {
  const child = forked ?? (await forkLocalStoresProcess());
  const credentials: StoreCredentials = {
    accessKeyId: `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(32).toString('base64url'),
  };
  // Held while it starts: nothing else may be keeping this process alive yet.
  child.ref();
  child.channel?.ref();
  const listeners = new Set<(event: unknown) => void>();
  const flushes = new Map<number, () => void>();
  let nextFlush = 0;
  let onExit = (): void => undefined;
  const exited = new Promise<void>((resolve) => (onExit = resolve));
  // A kept process may have died while it waited for this start.
  if (child.exitCode !== null || child.signalCode !== null) onExit();
  else child.once('exit', onExit);
  let onReady = (_message: { dynamoPort: number; s3Port: number }): void => undefined;
  let onFailure = (_error: Error): void => undefined;
  const ready = new Promise<{ dynamoPort: number; s3Port: number }>((resolve, reject) => {
    onReady = resolve;
    onFailure = reject;
  });
  const onMessage = (message: StoresMessage) => {
    if (message.type === 'ready') onReady(message);
    else if (message.type === 'failed') onFailure(new Error(`The local stores could not start: ${message.message}`));
    else if (message.type === 's3-event') for (const listener of listeners) listener(message.event);
    else if (message.type === 'flushed') flushes.get(message.id)?.();
  };
  child.once('error', onFailure);
  child.on('message', onMessage);
  void exited.then(() => onFailure(new Error('The local stores process exited before it was ready.')));
  if (child.connected) {
    child.send({
      type: 'start',
      dataDir,
      tables: tableInputs(layout),
      buckets: layout.buckets.map((bucket) => `${layout.prefix}${bucket.name}`),
      // Over IPC only: not in the process's arguments or environment, which other processes can read.
      credentials,
    } satisfies StoresRequest);
  }
  const { dynamoPort, s3Port } = await ready.catch((error: unknown) => {
    child.kill();
    throw error;
  });
  // While it runs, an unexpected exit fails every store call with connection refused, which the
  // platform reports; it must not keep the platform's process alive on its own either.
  child.unref();
  child.channel?.unref();

  /** Waits for `outcome`; both servers stop in milliseconds, so a process that takes longer is killed (it must not hang the platform's stop). */
  const withinGrace = async <T>(outcome: Promise<T>): Promise<T> => {
    const stuck = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    try {
      return await outcome;
    } finally {
      clearTimeout(stuck);
    }
  };

  /** Stops the servers and waits for `released`: true when the process is idle and fit for another start. */
  const release = async (): Promise<boolean> => {
    let onReleased = (_message: StoresMessage): void => undefined;
    const released = new Promise<boolean>((resolve) => {
      onReleased = (message) => void (message.type === 'released' && resolve(true));
      void exited.then(() => resolve(false));
    });
    child.on('message', onReleased);
    child.send({ type: 'release' } satisfies StoresRequest);
    const fit = await withinGrace(released);
    child.off('message', onReleased);
    return fit;
  };

  return {
    dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`,
    s3Endpoint: `http://127.0.0.1:${s3Port}`,
    credentials,
    onS3Event(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    flushS3Events() {
      if (!child.connected) return Promise.resolve();
      const id = nextFlush++;
      return new Promise<void>((resolve) => {
        flushes.set(id, () => {
          flushes.delete(id);
          resolve();
        });
        child.send({ type: 'flush', id } satisfies StoresRequest);
      });
    },
    async close() {
      if (keep !== undefined && child.connected && (await release())) {
        // This start's listeners leave with it: the next start's messages are not this one's.
        child.off('message', onMessage);
        child.off('error', onFailure);
        child.off('exit', onExit);
        keep(child);
        return;
      }
      if (child.connected) child.send({ type: 'close' } satisfies StoresRequest);
      await withinGrace(exited);
    },
  };
}

/** The CreateTable calls that make the layout's tables: what the stores' process is sent, and what a seed records. */
export function tableInputs(layout: StoresLayout): CreateTableInput[] {
  return layout.tables.map((table) => createTableInput(layout.prefix, table));
}

/** The CreateTable call that makes `table` (on-demand, every index projecting all attributes). */
function createTableInput(prefix: string, table: TableSpec): CreateTableInput {
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
  return {
    TableName: `${prefix}${table.name}`,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions,
    KeySchema: keySchema(table.partitionKey, table.sortKey),
    ...(table.indexes?.length
      ? {
          GlobalSecondaryIndexes: table.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: { ProjectionType: 'ALL' as const },
          })),
        }
      : {}),
  };
}
