/**
 * The fallback function answers paths no route has. Its message names the path as the client sent
 * it (API Gateway's `path`: a custom domain's base path, or the local host prefix, included), while
 * the match is made within the host (the `{proxy+}` parameter).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createFallbackHandler } from '../../functions/core/http/not-found.ts';

function proxyEvent(method: string, path: string, proxy: string): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    resource: '/{proxy+}',
    path,
    pathParameters: { proxy },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    headers: { host: 'api.example.test' },
    multiValueHeaders: {},
    body: null,
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: { requestId: 'req-1', stage: 'test', identity: { sourceIp: '127.0.0.1' } } as APIGatewayProxyEvent['requestContext'],
  };
}

describe('the fallback handler', () => {
  const handler = createFallbackHandler([{ method: 'GET', path: '/widget.js' }]);

  it('names the path the client asked for, not the path within the host', async () => {
    const res = await handler(proxyEvent('GET', '/cdn/nothing.js', 'nothing.js'));
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'NOT_FOUND', error: 'No endpoint at GET /cdn/nothing.js.' });
  });

  it('matches within the host: a known path with the wrong method is a 405', async () => {
    const res = await handler(proxyEvent('POST', '/cdn/widget.js', 'widget.js'));
    expect(res.statusCode).toBe(405);
    expect(res.headers?.['allow']).toBe('GET');
  });
});
