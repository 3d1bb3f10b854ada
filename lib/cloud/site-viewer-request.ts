/**
 * The site distribution's viewer-request function (CloudFront Functions, runtime cloudfront-js-2.0),
 * as the source CloudFront runs. It runs before the cache: a folder's address (`/alice/`,
 * `/alice/docs/`) becomes its `index.html`, so a page has one cache key however it is asked for,
 * and one invalidation path clears it (websites.service.ts maps `.../` paths the same way).
 * test/unit/site-viewer-request.test.ts runs this source in node:vm on CloudFront-shaped events.
 */
export const SITE_VIEWER_REQUEST_SOURCE = `function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri.length > 1 && uri.charAt(uri.length - 1) === '/') request.uri = uri + 'index.html';
  return request;
}
`;

/**
 * The same with a site domain (an origin per site, docs/ARCHITECTURE.md, Websites): a request on
 * `{alias}.{domain}` becomes the path form `/{alias}{uri}` the site function and the cache know, so
 * cache keys and invalidation paths stay per site as without a domain, and the function needs to
 * know nothing of hosts. The path form on any other name (the domain itself, the distribution's
 * own `*.cloudfront.net` name) answers 301 to the site's own origin, and whatever is not the path
 * form answers 404 here: no site's page is ever served on a name shared with another site. The
 * first segment must be an alias as written (users/user.schema.ts), not an encoding of one
 * (`/%61lice/`), which the function would decode.
 */
export function siteViewerRequestSource(domain: string): string {
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(domain))
    throw new Error(`The site domain '${domain}' is not a lower-case domain name such as sites.example.com.`);
  return `var SUFFIX = '.${domain}';
var ALIAS = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
function answer(statusCode, headers) {
  headers['cache-control'] = { value: 'public, max-age=3600' };
  headers['x-content-type-options'] = { value: 'nosniff' };
  return { statusCode: statusCode, statusDescription: statusCode === 301 ? 'Moved Permanently' : 'Not Found', headers: headers };
}
function queryOf(querystring) {
  var parts = [];
  for (var name in querystring) {
    var entry = querystring[name];
    var values = entry.multiValue ? entry.multiValue : [entry];
    for (var i = 0; i < values.length; i++) parts.push(values[i].value === '' ? name : name + '=' + values[i].value);
  }
  return parts.length === 0 ? '' : '?' + parts.join('&');
}
function handler(event) {
  var request = event.request;
  var uri = request.uri;
  var host = request.headers.host ? request.headers.host.value.toLowerCase() : '';
  if (host.length > SUFFIX.length && host.slice(-SUFFIX.length) === SUFFIX) {
    var alias = host.slice(0, -SUFFIX.length);
    if (!ALIAS.test(alias)) return answer(404, {});
    uri = '/' + alias + uri;
  } else {
    var match = /^\\/([^\\/]*)(\\/.*)?$/.exec(uri);
    if (match === null || !ALIAS.test(match[1])) return answer(404, {});
    return answer(301, { location: { value: 'https://' + match[1] + SUFFIX + (match[2] || '/') + queryOf(request.querystring) } });
  }
  if (uri.charAt(uri.length - 1) === '/') uri = uri + 'index.html';
  request.uri = uri;
  return request;
}
`;
}
