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
