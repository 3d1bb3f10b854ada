// Minimal declarations for the local stand-ins, which ship no types.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}

declare module 's3rver' {
  import type { RequestListener, Server } from 'node:http';
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory?: string;
    silent?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  class S3rver {
    constructor(options?: S3rverOptions);
    run(): Promise<AddressInfo | string>;
    /** Creates the configured buckets that are missing (the first half of `run`). */
    configureBuckets(): Promise<void>;
    /** Listens as `run` does (on a socket path too); `close` closes `httpServer`. */
    listen(path: string): Promise<Server>;
    httpServer: Server | undefined;
    /** Koa's request handler of the app. */
    callback(): RequestListener;
    close(): Promise<void>;
    /** s3rver is a Koa app: it emits `event` with an S3 notification (`{ Records }`) for object writes and deletes. */
    on(event: 'event', listener: (event: unknown) => void): this;
    off(event: 'event', listener: (event: unknown) => void): this;
  }
  export default S3rver;
}

declare module 's3rver/lib/models/account.js' {
  /** s3rver's accounts: it looks a request's access key id up here (and checks only V2 signatures). */
  class AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
    static readonly DUMMY_ACCOUNT: AWSAccount;
  }
  export default AWSAccount;
}

declare module 'busboy' {
  import type { IncomingHttpHeaders } from 'node:http';
  import type { Readable, Writable } from 'node:stream';
  /** busboy 0.3 (s3rver's): a multipart/form-data parser written to as a stream. */
  class Busboy extends Writable {
    constructor(options: { headers: IncomingHttpHeaders; limits?: { fieldSize?: number; fields?: number; files?: number; parts?: number; fileSize?: number } });
    on(event: 'field', listener: (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => void): this;
    on(event: 'file', listener: (name: string, file: Readable, fileName: string, encoding: string, mimeType: string) => void): this;
    on(event: 'finish', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
  }
  export default Busboy;
}
