/**
 * The local stores' own process: dynalite and s3rver, started by `startLocalStores` with `fork`.
 * They are CPU-heavy JavaScript servers; in the platform's process they shared one event loop with
 * HTTP, the handlers and the AWS SDK, and throughput stopped growing at 8 concurrent requests.
 *
 * Protocol (IPC, in order): the parent sends `start`; this process answers `ready` with its ports,
 * forwards each s3rver notification as `s3-event`, answers `flush` with `flushed` (so the parent
 * knows every notification sent before has arrived), and on `close` stops both servers and exits.
 * It exits as well when the parent goes away, so a crashed platform leaves no servers behind.
 */
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';

export type StoresRequest = { readonly type: 'start'; readonly dataDir: string } | { readonly type: 'flush'; readonly id: number } | { readonly type: 'close' };

export type StoresMessage =
  | { readonly type: 'ready'; readonly dynamoPort: number; readonly s3Port: number }
  | { readonly type: 's3-event'; readonly event: unknown }
  | { readonly type: 'flushed'; readonly id: number }
  | { readonly type: 'failed'; readonly message: string };

function send(message: StoresMessage): void {
  process.send?.(message);
}

async function start(dataDir: string) {
  const dynamoDir = join(dataDir, 'dynamodb');
  const s3Dir = join(dataDir, 's3');
  await mkdir(dynamoDir, { recursive: true });
  await mkdir(s3Dir, { recursive: true });
  const dynamo = dynalite({ path: dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(0, '127.0.0.1', () => resolve());
  });
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true });
  const s3Address = (await s3.run()) as AddressInfo;
  // Emitted before s3rver answers the write, so it is sent before the writer can see success.
  s3.on('event', (event: unknown) => send({ type: 's3-event', event }));
  send({ type: 'ready', dynamoPort: (dynamo.address() as AddressInfo).port, s3Port: s3Address.port });
  return async () => {
    await s3.close();
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
  };
}

let stop: (() => Promise<void>) | null = null;
process.on('message', (request: StoresRequest) => {
  if (request.type === 'start') {
    start(request.dataDir).then(
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
