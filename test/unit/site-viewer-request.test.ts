/**
 * The site distribution's viewer-request function, run as CloudFront would: its source in a fresh
 * node:vm context, `handler(event)` called on CloudFront Functions-shaped viewer-request events.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { SITE_VIEWER_REQUEST_SOURCE, siteViewerRequestSource } from '../../lib/cloud/site-viewer-request.ts';

interface CloudFrontRequest {
  method: string;
  uri: string;
  querystring: Record<string, { value: string }>;
  headers: Record<string, { value: string }>;
  cookies: Record<string, { value: string }>;
}

/** What a function answers itself instead of passing the request on. */
interface CloudFrontResponse {
  statusCode: number;
  headers: Record<string, { value: string }>;
}

/** A viewer-request event as CloudFront Functions (cloudfront-js-2.0) passes it. */
function viewerRequest(uri: string, querystring: Record<string, { value: string }> = {}, host = 'd111111abcdef8.cloudfront.net') {
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111111abcdef8.cloudfront.net', distributionId: 'EDFDVBD6EXAMPLE', eventType: 'viewer-request', requestId: 'r-1' },
    viewer: { ip: '198.51.100.11' },
    request: { method: 'GET', uri, querystring, headers: { host: { value: host } }, cookies: {} },
  };
}

function run(event: ReturnType<typeof viewerRequest>, source = SITE_VIEWER_REQUEST_SOURCE): CloudFrontRequest {
  const sandbox: { event: unknown; result?: CloudFrontRequest } = { event };
  runInNewContext(`${source}\nresult = handler(event);`, sandbox);
  return sandbox.result!;
}

const DOMAIN = 'sites.example.com';
const onDomain = (uri: string, host: string, querystring: Record<string, { value: string }> = {}) =>
  run(viewerRequest(uri, querystring, host), siteViewerRequestSource(DOMAIN)) as CloudFrontRequest & CloudFrontResponse;

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

describe('site viewer-request function with a site domain', () => {
  it('serves {alias}.{domain} as the path form the site function and the cache know, folders as their index.html', () => {
    // Act
    const root = onDomain('/', `alice.${DOMAIN}`);
    const folder = onDomain('/docs/', `alice.${DOMAIN}`);
    const file = onDomain('/bob/style.css', `alice.${DOMAIN}`);

    // Assess
    expect(root.uri).toBe('/alice/index.html');
    expect(folder.uri).toBe('/alice/docs/index.html');
    expect(file.uri).toBe('/alice/bob/style.css');
  });

  it("redirects the path form on the domain and on the distribution's own name to the site's origin, query kept", () => {
    // Act
    const onApex = onDomain('/alice/docs/', DOMAIN, { v: { value: '2' } });
    const bare = onDomain('/alice', DOMAIN);
    const onDistribution = onDomain('/alice/a.css', 'd111111abcdef8.cloudfront.net');

    // Assess
    expect(onApex.statusCode).toBe(301);
    expect(onApex.headers['location']!.value).toBe(`https://alice.${DOMAIN}/docs/?v=2`);
    expect(bare.headers['location']!.value).toBe(`https://alice.${DOMAIN}/`);
    expect(onDistribution.headers['location']!.value).toBe(`https://alice.${DOMAIN}/a.css`);
  });

  it('answers 404 itself for anything else on a shared name, and for names that are not an alias', () => {
    // Act
    const answers = [
      onDomain('/', DOMAIN),
      onDomain('/%61lice/', DOMAIN),
      onDomain('/Alice/', DOMAIN),
      onDomain('/', `a.b.${DOMAIN}`),
      onDomain('/', `-x.${DOMAIN}`),
    ];

    // Assess
    for (const answer of answers) {
      expect(answer.statusCode).toBe(404);
      expect(answer.uri).toBeUndefined();
    }
  });

  it('refuses a domain that is not a lower-case name', () => {
    // Act
    const make = () => siteViewerRequestSource("x'; alert(1); '");

    // Assess
    expect(make).toThrow(/not a lower-case domain/);
  });
});
