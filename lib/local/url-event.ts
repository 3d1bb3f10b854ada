import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { RequestOrigin } from './forwarded.ts';

/** Builds the Lambda function URL (v2) event the cloud would deliver for a streaming request. */
export function toUrlEvent(
  req: IncomingMessage,
  input: {
    requestId: string;
    path: string;
    query: URLSearchParams;
    rawQuery: string;
    body: Buffer | null;
    /** Where the request was sent (forwarded.ts): the event's domain name and `x-forwarded-proto`. */
    origin: RequestOrigin;
  },
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  // A function URL sets this one itself, whatever the client sent: the scheme the request came in on.
  headers['x-forwarded-proto'] = input.origin.proto;
  const queryStringParameters: Record<string, string> = {};
  for (const [key, value] of input.query)
    queryStringParameters[key] = queryStringParameters[key] === undefined ? value : `${queryStringParameters[key]},${value}`;
  const method = (req.method ?? 'GET').toUpperCase();
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: input.path,
    // As the client sent it, as a function URL passes it on: a re-encoding would change what was signed.
    rawQueryString: input.rawQuery,
    headers,
    queryStringParameters: Object.keys(queryStringParameters).length > 0 ? queryStringParameters : undefined,
    body: input.body === null ? undefined : input.body.toString('base64'),
    isBase64Encoded: input.body !== null,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: input.origin.host,
      domainPrefix: 'local',
      http: {
        method,
        path: input.path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: req.headers['user-agent'] ?? '',
      },
      requestId: input.requestId,
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
  };
}
