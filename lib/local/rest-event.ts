import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { RequestOrigin } from './forwarded.ts';

/** Builds the API Gateway REST (v1) proxy event the cloud would deliver for this request. */
export function toRestEvent(
  req: IncomingMessage,
  input: {
    requestId: string;
    path: string;
    resource: string;
    pathParameters: Record<string, string>;
    query: URLSearchParams;
    body: Buffer | null;
    /** Where the request was sent (forwarded.ts): the event's domain name and `X-Forwarded-Proto`. */
    origin: RequestOrigin;
  },
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    // API Gateway sets this one itself, whatever the client sent: the scheme the request came in on.
    if (name.toLowerCase() === 'x-forwarded-proto') continue;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  headers['X-Forwarded-Proto'] = input.origin.proto;
  multiValueHeaders['X-Forwarded-Proto'] = [input.origin.proto];
  const queryStringParameters: Record<string, string> = {};
  const multiValueQueryStringParameters: Record<string, string[]> = {};
  for (const [key, value] of input.query) {
    queryStringParameters[key] = value;
    (multiValueQueryStringParameters[key] ??= []).push(value);
  }
  const hasQuery = Object.keys(queryStringParameters).length > 0;
  const now = Date.now();
  return {
    resource: input.resource,
    path: input.path,
    httpMethod: (req.method ?? 'GET').toUpperCase(),
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? queryStringParameters : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQueryStringParameters : null,
    pathParameters: Object.keys(input.pathParameters).length > 0 ? input.pathParameters : null,
    stageVariables: null,
    body: input.body === null ? null : input.body.toString('base64'),
    isBase64Encoded: input.body !== null,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      domainName: input.origin.host,
      httpMethod: (req.method ?? 'GET').toUpperCase(),
      path: input.path,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: input.requestId,
      requestTime: new Date(now).toISOString(),
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: input.resource,
      stage: 'local',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}
