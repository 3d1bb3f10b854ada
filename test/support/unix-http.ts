import http from 'node:http';

/** One HTTP request to a server on a Unix socket (the sandboxed runtimes listen on those). */
export function requestOverSocket(
  socketPath: string,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = options.body ?? '';
    const request = http.request(
      { socketPath, method, path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers } },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (chunk: Buffer) => parts.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
