import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a stand-in received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export interface StandIn {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The requests whose path ends with `suffix`. */
  to(suffix: string): RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in of a platform's API: records every request and answers what the real
 * service answers to success (`answer` per path suffix, `{ok: true}` otherwise).
 */
export async function startStandIn(answers: Record<string, unknown> = {}): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const match = Object.entries(answers).find(([suffix]) => path.endsWith(suffix));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(match === undefined ? { ok: true } : match[1]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    to: (suffix) => requests.filter((request) => request.path.split('?')[0]!.endsWith(suffix)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
