/**
 * The fallback function answers paths no route has. Its message names the path as the client sent
 * it (API Gateway's `path`: a custom domain's base path, or the local host prefix, included), while
 * the match is made within the host (the `{proxy+}` parameter).
 */
import { restEvent } from '../support/rest-event.ts';
import { describe, expect, it } from 'vitest';
import { createFallbackHandler } from '../../functions/core/http/not-found.ts';

function proxyEvent(method: string, path: string, proxy: string) {
  return restEvent({ method, resource: '/{proxy+}', path, pathParameters: { proxy } });
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
