import type { APIGatewayProxyEvent } from 'aws-lambda';

/** An API Gateway REST (v1) event as the cloud delivers it to a function, for tests that call a handler directly. */
export function restEvent(options: {
  readonly resource: string;
  readonly method?: string;
  /** @default the resource */
  readonly path?: string;
  readonly pathParameters?: Record<string, string> | null;
  /** @default 'test' */
  readonly stage?: string;
}): APIGatewayProxyEvent {
  return {
    httpMethod: options.method ?? 'GET',
    resource: options.resource,
    path: options.path ?? options.resource,
    pathParameters: options.pathParameters ?? null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    headers: { host: 'api.example.test' },
    multiValueHeaders: {},
    body: null,
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: { requestId: 'req-1', stage: options.stage ?? 'test', identity: { sourceIp: '127.0.0.1' } } as APIGatewayProxyEvent['requestContext'],
  };
}
