import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { AwsLambdaStreaming } from '../../functions/core/http/lambda-stream.ts';

/**
 * The local stand-in for the response stream Lambda hands a `streamifyResponse` handler: the prelude
 * becomes the HTTP status line and headers, and each write goes to the socket at once (chunked
 * transfer), so clients see chunks as the handler writes them.
 */
export class LocalResponseStream extends Writable {
  constructor(private readonly res: ServerResponse) {
    super();
  }

  setPrelude(prelude: { statusCode: number; headers: Record<string, string> }): void {
    this.res.writeHead(prelude.statusCode, prelude.headers);
    this.res.flushHeaders();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.res.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.res.end(callback);
  }
}

const shim: AwsLambdaStreaming = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      if (!(stream instanceof LocalResponseStream)) throw new Error('local streaming shim expects a LocalResponseStream');
      stream.setPrelude(prelude);
      return stream;
    },
  },
};

/**
 * Installs the shim's parts that are missing. The AWS SDK itself creates an empty `awslambda`
 * global (for its invoke store), so the object may exist without the streaming API.
 */
export function installStreamingShim(): void {
  const scope = globalThis as unknown as { awslambda?: Partial<AwsLambdaStreaming> };
  const runtime = (scope.awslambda ??= {});
  runtime.streamifyResponse ??= shim.streamifyResponse;
  runtime.HttpResponseStream ??= shim.HttpResponseStream;
}
