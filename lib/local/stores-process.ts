/**
 * The local stores' own process: dynalite and s3rver, started by `startLocalStores` with `fork`.
 * They are CPU-heavy JavaScript servers; in the platform's process they shared one event loop with
 * HTTP, the handlers and the AWS SDK, and throughput stopped growing at 8 concurrent requests.
 *
 * Protocol (IPC, in order): the parent sends `start` with the data directory, the tables and
 * buckets to create when missing and the credentials of this start; this process answers `ready`
 * with its ports once they exist,
 * forwards each s3rver notification as `s3-event`, answers `flush` with `flushed` (so the parent
 * knows every notification sent before has arrived), and on `close` stops both servers and exits;
 * on `release` it stops them and answers `released`, then waits for another `start` (a caller that
 * starts many platforms in one process, the test harness, keeps it: loading its modules is most of
 * what a start of this process costs).
 * It exits as well when the parent goes away, so a crashed platform leaves no servers behind.
 *
 * Neither stand-in checks credentials (dynalite accepts any signature, s3rver any V4 signature and
 * any POST policy), and their ports are reachable by every local process and account. So the only
 * ports are a front (one per store) that checks each request (stores-auth.ts) and then hands it to
 * the stand-in's own request handler in this process: the platform's calls signed by the
 * credentials of this start, presigned URLs it handed out, and form uploads within their signed
 * policy. The stand-ins themselves listen only on sockets in a private directory (mode 700), which
 * only this process uses (to create tables, to store a checked form upload).
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { CreateTableInput, DescribeTableOutput, ListTablesOutput } from '@aws-sdk/client-dynamodb';
import Busboy from 'busboy';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import S3rverAccount from 's3rver/lib/models/account.js';
import { storeVerifier, type PostGrant, type Refusal, type StoreCredentials, type StoreVerifier } from './stores-auth.ts';

export type StoresRequest =
  | {
      readonly type: 'start';
      readonly dataDir: string;
      /** Created when missing, before `ready`. */
      readonly tables: readonly CreateTableInput[];
      /** Bucket names, likewise. */
      readonly buckets: readonly string[];
      /** What every request must be signed with: made by the platform for this start, sent only here. */
      readonly credentials: StoreCredentials;
    }
  | { readonly type: 'flush'; readonly id: number }
  | { readonly type: 'release' }
  | { readonly type: 'close' };

export type StoresMessage =
  | { readonly type: 'ready'; readonly dynamoPort: number; readonly s3Port: number }
  | { readonly type: 's3-event'; readonly event: unknown }
  | { readonly type: 'flushed'; readonly id: number }
  | { readonly type: 'released' }
  | { readonly type: 'failed'; readonly message: string };

function send(message: StoresMessage): void {
  process.send?.(message);
}

async function start({ dataDir, tables, buckets, credentials }: Extract<StoresRequest, { type: 'start' }>) {
  const dynamoDir = join(dataDir, 'dynamodb');
  const s3Dir = join(dataDir, 's3');
  // The build's seed (forkStoresProcess): its dynalite directory and the tables file it was made from.
  const [seedDynamo, seedTables] = process.argv.slice(2);
  if (seedDynamo !== undefined && seedTables !== undefined && !existsSync(dynamoDir)) await copySeed(seedDynamo, seedTables, dynamoDir, tables);
  await mkdir(dynamoDir, { recursive: true });
  await mkdir(s3Dir, { recursive: true });
  // mkdtemp makes it mode 700: no other account reaches the stand-ins' own sockets. In the system's
  // temporary directory, whose path is short enough for a socket name, unlike some DATA_DIRs.
  const socketDir = await mkdtemp(join(tmpdir(), 'platform-stores-'));
  const dynamoSocket = join(socketDir, 'dynamodb.sock');
  const s3Socket = join(socketDir, 's3.sock');
  const dynamo = dynalite({ path: dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(dynamoSocket, () => resolve());
  });
  // s3rver signs nothing itself, but it answers presigned GETs' response-header overrides only to a
  // known key: the front has checked the signature by then.
  S3rverAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
  S3rverAccount.DUMMY_ACCOUNT.createKeyPair(credentials.accessKeyId, credentials.secretAccessKey);
  const s3 = new S3rver({ directory: s3Dir, silent: true, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  // s3rver creates the buckets that are missing (what its `run` does before listening).
  await Promise.all([s3.configureBuckets().then(async () => void (s3.httpServer = await s3.listen(s3Socket))), ensureTables(dynamoSocket, tables)]);
  // Emitted before s3rver answers the write, so it is sent before the writer can see success.
  s3.on('event', (event: unknown) => send({ type: 's3-event', event }));
  const dynamoFront = createServer(dynamoFrontHandler(storeVerifier('dynamodb', credentials), dynamo.listeners('request')[0] as RequestListener));
  const s3Front = createServer(s3FrontHandler(storeVerifier('s3', credentials), s3.callback(), s3Socket));
  for (const front of [dynamoFront, s3Front]) keepIdleSockets(front);
  const [dynamoPort, s3Port] = await Promise.all([listenOnLoopback(dynamoFront), listenOnLoopback(s3Front)]);
  send({ type: 'ready', dynamoPort, s3Port });
  return async () => {
    await Promise.all([closeServer(dynamoFront), closeServer(s3Front)]);
    await s3.close();
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    await rm(socketDir, { recursive: true, force: true });
    // The account is s3rver's module state, which outlives the servers: a released process must
    // not accept the last start's key at its next one.
    S3rverAccount.DUMMY_ACCOUNT.revokeAccessKey(credentials.accessKeyId);
  };
}

/**
 * Node closes a keep-alive socket after 5 s idle and says so (`Keep-Alive: timeout=5`); its clients
 * (fetch, the SDK) keep it up to a second less. The platform and the tests share one event loop with
 * these clients, so when that loop is busy for a few seconds between two requests, the next one goes
 * out on a socket the server has just closed, and fails with ECONNRESET (a presigned PUT right after
 * a 50 MB one did, in full test runs). Kept idle for a minute, as load balancers do, a socket a
 * client still holds is one the server still serves.
 */
const IDLE_SOCKET_MS = 60_000;

function keepIdleSockets(server: Server): void {
  server.keepAliveTimeout = IDLE_SOCKET_MS;
  // Above the keep-alive time, or a request arriving on an old socket could be cut (Node's docs).
  server.headersTimeout = IDLE_SOCKET_MS + 1_000;
}

function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** DynamoDB's answer to a request these stores refuse (DynamoDB answers them 400 as well). */
const DYNAMO_REFUSALS: Record<Refusal['code'], string> = {
  MissingAuthentication: 'MissingAuthenticationTokenException',
  InvalidAccessKeyId: 'UnrecognizedClientException',
  SignatureDoesNotMatch: 'InvalidSignatureException',
  ExpiredRequest: 'InvalidSignatureException',
  MalformedRequest: 'IncompleteSignatureException',
  PolicyViolation: 'AccessDeniedException',
};

function dynamoFrontHandler(verifier: StoreVerifier, dynalite: RequestListener): RequestListener {
  return (req, res) => {
    verifier.verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }).then(
      (refused) => {
        if (refused === null) return dynalite(req, res);
        const body = JSON.stringify({ __type: `com.amazon.coral.service#${DYNAMO_REFUSALS[refused.code]}`, message: refused.message });
        refuse(req, res, 400, 'application/x-amz-json-1.0', body);
      },
      (error: unknown) => refuse(req, res, 500, 'application/x-amz-json-1.0', JSON.stringify({ __type: 'InternalFailure', message: (error as Error).message })),
    );
  };
}

/** S3's status and code for a request these stores refuse. */
const S3_REFUSALS: Record<Refusal['code'], readonly [number, string]> = {
  MissingAuthentication: [403, 'AccessDenied'],
  InvalidAccessKeyId: [403, 'InvalidAccessKeyId'],
  SignatureDoesNotMatch: [403, 'SignatureDoesNotMatch'],
  ExpiredRequest: [403, 'AccessDenied'],
  MalformedRequest: [400, 'InvalidRequest'],
  PolicyViolation: [403, 'AccessDenied'],
};

function s3FrontHandler(verifier: StoreVerifier, s3rver: RequestListener, s3Socket: string): RequestListener {
  return (req, res) => {
    if (browserCors(req, res)) return;
    const bucket = formUploadBucket(req);
    if (bucket !== null) return formUpload(req, res, bucket, verifier, s3Socket);
    verifier.verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }).then(
      (refused) => {
        if (refused === null) {
          noticeBulkDelete(req, res);
          return s3rver(req, res);
        }
        const [status, code] = S3_REFUSALS[refused.code];
        refuseS3(req, res, status, code, refused.message);
      },
      (error: unknown) => refuseS3(req, res, 500, 'InternalError', (error as Error).message),
    );
  };
}

/**
 * CORS as the cloud's data buckets answer it for presigned uploads and downloads from a browser
 * (the console's): any origin may PUT, POST, GET and HEAD, for the URL is the permission and no
 * cookie is sent. A preflight is answered here (true: done), before any signature is looked for, as
 * S3 does; any other request from a page gets the allowing headers on whatever it is answered,
 * refusals included, so the page reads the refusal instead of a network error.
 */
function browserCors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  const method = req.headers['access-control-request-method'];
  if (req.method === 'OPTIONS' && method !== undefined) {
    const allowed = ['PUT', 'POST', 'GET', 'HEAD'];
    if (!allowed.includes(method.toUpperCase())) {
      refuseS3(req, res, 403, 'AccessForbidden', 'CORSResponse: This CORS request is not allowed.');
      return true;
    }
    res.writeHead(200, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': allowed.join(', '),
      ...(req.headers['access-control-request-headers'] === undefined ? {} : { 'access-control-allow-headers': req.headers['access-control-request-headers'] }),
      'access-control-max-age': '3000',
      vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
    });
    res.end();
    return true;
  }
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', 'ETag');
    return writeHead(...args);
  }) as typeof res.writeHead;
  return false;
}

/**
 * s3rver sends no notification for a multi-object delete (POST `/{bucket}?delete`), which S3 does
 * (one per key): this one names only the bucket (`{ bucket }`), so its listeners (the local site
 * cache) forget all they hold of it. Sent before s3rver starts and again before it answers, like
 * its own notifications: a reader that saw the answer, then flushed, has seen it.
 */
function noticeBulkDelete(req: IncomingMessage, res: ServerResponse): void {
  const bucket = req.method === 'POST' ? /^\/([^/?]+)\/?\?(?:.*&)?delete(?:[=&]|$)/.exec(req.url ?? '')?.[1] : undefined;
  if (bucket === undefined) return;
  const notice = () => send({ type: 's3-event', event: { bucket: decodeURIComponent(bucket) } });
  notice();
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    notice();
    return writeHead(...args);
  }) as typeof res.writeHead;
}

/** The bucket of a browser form upload (an unsigned multipart POST to `/{bucket}`); null for any other request. */
function formUploadBucket(req: IncomingMessage): string | null {
  if (req.method !== 'POST' || req.headers.authorization !== undefined) return null;
  if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data')) return null;
  const match = /^\/([a-z0-9][a-z0-9.-]*)\/?$/.exec(req.url ?? '');
  return match?.[1] ?? null;
}

/** Fields and parts a form upload may have before its file: a policy form has about ten. */
const FORM_LIMITS = { fieldSize: 64 * 1024, fields: 50, files: 1, parts: 51 };

/**
 * A form upload (S3 POST Object), checked as S3 checks it: the fields before the file against the
 * signed policy (key, content type, expiry, no unnamed field), then the file's size against its
 * `content-length-range` while it arrives, held in memory up to that size. Only then is it stored,
 * as a PUT of exactly the checked key, type and bytes: s3rver never reads the form itself.
 */
function formUpload(req: IncomingMessage, res: ServerResponse, bucket: string, verifier: StoreVerifier, s3Socket: string): void {
  let parser: InstanceType<typeof Busboy>;
  try {
    parser = new Busboy({ headers: req.headers, limits: FORM_LIMITS });
  } catch {
    return refuseS3(req, res, 400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');
  }
  const fields = new Map<string, string>();
  let duplicate = false;
  let sawFile = false;
  let settled = false;
  const stop = (status: number, code: string, message: string) => {
    if (settled) return;
    settled = true;
    req.unpipe(parser);
    refuseS3(req, res, status, code, message);
  };
  const receive = async (file: Readable) => {
    if (duplicate) return stop(400, 'InvalidArgument', 'A form field appears twice.');
    const grant = await verifier.verifyPost(bucket, fields);
    if ('code' in grant) {
      const [status, code] = S3_REFUSALS[grant.code];
      return stop(status, code, grant.message);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    file.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > grant.maxBytes) {
        file.removeAllListeners('data');
        file.resume();
        stop(400, 'EntityTooLarge', `Your proposed upload exceeds the maximum allowed size (${grant.maxBytes} bytes).`);
      } else chunks.push(chunk);
    });
    file.once('end', () => {
      if (settled) return;
      if (size < grant.minBytes) return stop(400, 'EntityTooSmall', `Your proposed upload is smaller than the minimum allowed size (${grant.minBytes} bytes).`);
      settled = true;
      storeChecked(s3Socket, bucket, grant, Buffer.concat(chunks, size)).then(
        (etag) => {
          res.writeHead(204, etag === undefined ? {} : { etag });
          res.end();
        },
        (error: unknown) => refuseS3(req, res, 500, 'InternalError', (error as Error).message),
      );
    });
  };
  parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (sawFile || settled) return;
    if (valueTruncated) return stop(400, 'MalformedPOSTRequest', `The form field ${name} is too long.`);
    const lower = name.toLowerCase();
    // A part named file without a file name: its value is the file (as S3 takes it).
    if (lower === 'file') {
      sawFile = true;
      return void receive(Readable.from([Buffer.from(value)])).catch((error: unknown) => stop(500, 'InternalError', (error as Error).message));
    }
    if (fields.has(lower)) duplicate = true;
    fields.set(lower, value);
  });
  parser.on('file', (name: string, file: Readable) => {
    if (sawFile || settled || name.toLowerCase() !== 'file') return void file.resume();
    sawFile = true;
    receive(file).catch((error: unknown) => stop(500, 'InternalError', (error as Error).message));
  });
  parser.on('finish', () => {
    if (!sawFile) stop(400, 'InvalidArgument', 'POST requires exactly one file upload per request.');
  });
  parser.on('error', () => stop(400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.'));
  req.pipe(parser);
}

/** Stores a checked form upload through s3rver's private socket (so that it notifies as for any write); its ETag. */
function storeChecked(s3Socket: string, bucket: string, grant: PostGrant, body: Buffer): Promise<string | undefined> {
  const path = `/${bucket}/${grant.key.split('/').map(encodeURIComponent).join('/')}`;
  return new Promise((resolve, reject) => {
    const put = httpRequest(
      {
        socketPath: s3Socket,
        method: 'PUT',
        path,
        headers: { host: 'localhost', 'content-length': body.length, ...(grant.contentType === undefined ? {} : { 'content-type': grant.contentType }) },
      },
      (response) => {
        response.resume();
        response.once('end', () => {
          if (response.statusCode === 200) resolve(response.headers.etag);
          else reject(new Error(`s3rver answered the checked upload ${response.statusCode ?? 'nothing'}`));
        });
      },
    );
    put.once('error', reject);
    put.end(body);
  });
}

/** A refused request's body is read (up to this much) before the answer, so that a client still sending it reads the answer. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

function refuse(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string): void {
  const answer = () => {
    if (res.headersSent) return;
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  };
  if (req.readableEnded) return answer();
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) {
      answer();
      req.destroy();
    }
  });
  req.once('end', answer);
  req.resume();
}

function refuseS3(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string): void {
  const escape = (text: string) => text.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c] ?? c);
  refuse(
    req,
    res,
    status,
    'application/xml',
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escape(message)}</Message></Error>`,
  );
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
async function ensureTables(socketPath: string, tables: readonly CreateTableInput[]): Promise<void> {
  const existing = new Set<string>();
  let ExclusiveStartTableName: string | undefined;
  do {
    const page = await callDynalite<ListTablesOutput>(socketPath, 'ListTables', { ExclusiveStartTableName });
    for (const name of page.TableNames ?? []) existing.add(name);
    ExclusiveStartTableName = page.LastEvaluatedTableName;
  } while (ExclusiveStartTableName !== undefined);
  const missing = tables.filter((table) => !existing.has(table.TableName!));
  await Promise.all(missing.map((table) => callDynalite(socketPath, 'CreateTable', table)));
  // dynalite answers CreateTable while the table is still CREATING, and refuses writes until it
  // turns ACTIVE a tick later (later still on a loaded machine).
  await Promise.all(
    missing.map(async ({ TableName }) => {
      for (let attempt = 0; ; attempt += 1) {
        const { Table } = await callDynalite<DescribeTableOutput>(socketPath, 'DescribeTable', { TableName });
        if (Table?.TableStatus === 'ACTIVE') return;
        if (attempt >= 200) throw new Error(`Table ${TableName} is still ${Table?.TableStatus ?? 'missing'} after creation.`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }),
  );
}

/**
 * One DynamoDB call to dynalite on its private socket, in the JSON protocol the SDK speaks; without
 * the SDK, which this process does not otherwise load. dynalite requires a request to look signed
 * and never checks the signature (the front does, for everyone else).
 */
function callDynalite<T>(socketPath: string, operation: string, input: object): Promise<T> {
  const body = JSON.stringify(input);
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      {
        socketPath,
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
  } else if (request.type === 'release') {
    const stopping = stop;
    stop = null;
    // A process that could not stop its servers cleanly is not fit for another start.
    void (stopping?.() ?? Promise.resolve()).then(
      () => send({ type: 'released' }),
      () => process.exit(1),
    );
  } else {
    void (stop?.() ?? Promise.resolve()).finally(() => process.exit(0));
  }
});
process.on('disconnect', () => void (stop?.() ?? Promise.resolve()).finally(() => process.exit(0)));
