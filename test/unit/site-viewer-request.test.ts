/**
 * The site distribution's viewer-request function, run as CloudFront would: its source in a fresh
 * node:vm context, `handler(event)` called on CloudFront Functions-shaped viewer-request events.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { SITE_VIEWER_REQUEST_SOURCE } from '../../lib/cloud/site-viewer-request.ts';

interface CloudFrontRequest {
  method: string;
  uri: string;
  querystring: Record<string, { value: string }>;
  headers: Record<string, { value: string }>;
  cookies: Record<string, { value: string }>;
}

/** A viewer-request event as CloudFront Functions (cloudfront-js-2.0) passes it. */
function viewerRequest(uri: string, querystring: Record<string, { value: string }> = {}) {
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111111abcdef8.cloudfront.net', distributionId: 'EDFDVBD6EXAMPLE', eventType: 'viewer-request', requestId: 'r-1' },
    viewer: { ip: '198.51.100.11' },
    request: { method: 'GET', uri, querystring, headers: { host: { value: 'd111111abcdef8.cloudfront.net' } }, cookies: {} },
  };
}

function run(event: ReturnType<typeof viewerRequest>): CloudFrontRequest {
  const sandbox: { event: unknown; result?: CloudFrontRequest } = { event };
  runInNewContext(`${SITE_VIEWER_REQUEST_SOURCE}\nresult = handler(event);`, sandbox);
  return sandbox.result!;
}

describe('site viewer-request function', () => {
  it("gives a site's root and its folders their index.html", () => {
    // Act
    const root = run(viewerRequest('/alice/'));
    const nested = run(viewerRequest('/alice/docs/guide/'));

    // Assess
    expect(root.uri).toBe('/alice/index.html');
    expect(nested.uri).toBe('/alice/docs/guide/index.html');
  });

  it('leaves files, bare aliases (the origin redirects them) and the host root alone', () => {
    // Act
    const file = run(viewerRequest('/alice/style.css'));
    const bare = run(viewerRequest('/alice'));
    const top = run(viewerRequest('/'));

    // Assess
    expect(file.uri).toBe('/alice/style.css');
    expect(bare.uri).toBe('/alice');
    expect(top.uri).toBe('/');
  });

  it('returns the request itself, query string and headers untouched', () => {
    // Prepare
    const event = viewerRequest('/alice/', { v: { value: '2' } });

    // Act
    const request = run(event);

    // Assess
    expect(request.querystring).toEqual({ v: { value: '2' } });
    expect(request.headers).toEqual({ host: { value: 'd111111abcdef8.cloudfront.net' } });
    expect(request.method).toBe('GET');
  });
});
