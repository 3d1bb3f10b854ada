import { buildOpenApiDocument, withServers, type OpenApiDocument } from '../../lib/manifest/openapi.ts';
import { routes } from '../../lib/manifest/routes.ts';
import type { AnyRouteDefinition } from '../core/http/route.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';
import { NotFoundError } from '../core/errors.ts';
import type { Host, RouteSpec } from '../../lib/manifest/types.ts';
import { viewerAsset, viewerVersion } from './docs-viewer.ts';
import { loadRouteDefinition } from './route-definitions.ts';

/** By version: a process serves one, but a process that asks for two (tests sharing a process) gets each. */
const documents = new Map<string, Promise<OpenApiDocument>>();

/**
 * The platform's OpenAPI document, built on the first request and kept for the process: it
 * imports every handler module for its schemas, which no other request of this function needs.
 * Only the servers differ between requests (the URLs may come from the request).
 */
export async function openApiDocument(version: string, urls: PublicUrls): Promise<OpenApiDocument> {
  let document = documents.get(version);
  if (document === undefined) {
    document = buildDocument(version);
    documents.set(version, document);
    // A failure (a bug in a schema) is not kept, so it shows in the log of every attempt.
    document.catch(() => documents.delete(version));
  }
  return withServers(await document, (host) => urlOf(urls, host));
}

async function buildDocument(version: string): Promise<OpenApiDocument> {
  const definitions = new Map<RouteSpec, AnyRouteDefinition>();
  for (const route of routes) definitions.set(route, await loadRouteDefinition(route));
  return buildOpenApiDocument({
    routes,
    version,
    definitionOf: (route) => {
      const definition = definitions.get(route);
      if (definition === undefined) throw new Error(`${route.id}: no handler definition loaded`);
      return definition;
    },
  });
}

function urlOf(urls: PublicUrls, host: Host): string {
  // A host with routes is served, so its URL is configured (PublicUrls); the base URL only keeps
  // the document well-formed should a wiring ever leave one out.
  const byHost: Readonly<Record<Host, string | undefined>> = {
    base: urls.baseUrl,
    stream: urls.streamUrl,
    mcp: urls.mcpUrl,
    voice: urls.voiceUrl,
    cdn: urls.cdnUrl,
    site: urls.siteUrl,
    code: urls.codeUrl,
  };
  return byHost[host] ?? urls.baseUrl;
}

/**
 * The reference page. Every URL is relative (`docs/...`, `openapi.json`), so the page works under
 * the cloud API's stage prefix as well as at the local root, and loads nothing from elsewhere.
 */
export async function docsPage(): Promise<string> {
  const v = encodeURIComponent(await viewerVersion());
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agent platform API reference</title>
    <link rel="stylesheet" href="docs/swagger-ui.css?v=${v}" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="docs/swagger-ui-bundle.js?v=${v}"></script>
    <script>
      // validatorUrl: null keeps the viewer from sending the document to an online validator.
      window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null });
    </script>
  </body>
</html>
`;
}

/** One file of the viewer, as `Reply.raw` wants it; 404 for any other name. */
export async function docsAsset(name: string): Promise<{ body: string; contentType: string }> {
  const asset = viewerAsset(name);
  if (asset === null) throw new NotFoundError(`No file ${name} in the API reference viewer.`);
  return { body: await asset.body, contentType: asset.contentType };
}
