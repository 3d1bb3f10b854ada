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
    close(): Promise<void>;
    /** s3rver is a Koa app: it emits `event` with an S3 notification (`{ Records }`) for object writes and deletes. */
    on(event: 'event', listener: (event: unknown) => void): this;
    off(event: 'event', listener: (event: unknown) => void): this;
  }
  export default S3rver;
}
