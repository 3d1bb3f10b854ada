import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The reference page's viewer: Swagger UI's prebuilt bundle from npm (`swagger-ui-dist`), served by
 * the platform itself so `/docs` works with no network beyond the platform. Chosen for its small
 * footprint: two files (the JS bundle and its CSS, about 1.9 MB together) and one dependency, with
 * OpenAPI 3.1 support; Scalar's and Redoc's standalone bundles are larger and pull in far bigger
 * dependency trees (Vue, React and friends) at install.
 */
export const VIEWER_PACKAGE = 'swagger-ui-dist';

/** The files `/docs/{asset}` serves, with their content types. */
export const VIEWER_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

/**
 * Everything of the package the area reads at run time, relative to the repository root: the assets,
 * the package.json that locates them and gives the version, and the licence that must travel with them.
 * The cloud copies these into the reference function's bundle at the same paths (`runtimeFiles`).
 */
export const VIEWER_FILES: readonly string[] = ['package.json', 'LICENSE', 'NOTICE', ...Object.keys(VIEWER_ASSETS)].map(
  (file) => `node_modules/${VIEWER_PACKAGE}/${file}`,
);

/**
 * The package's folder, found the way Node finds packages from this module: the repository's
 * node_modules locally, and in the cloud the copy beside the bundle (`/var/task/node_modules`).
 */
function viewerDirectory(): string {
  return dirname(createRequire(import.meta.url).resolve(`${VIEWER_PACKAGE}/package.json`));
}

let version: Promise<string> | undefined;

/** The viewer's version, which the page puts in the asset URLs so a browser never mixes two versions from its cache. */
export function viewerVersion(): Promise<string> {
  version ??= readFile(join(viewerDirectory(), 'package.json'), 'utf8').then((text) => (JSON.parse(text) as { version: string }).version);
  return version;
}

const assets = new Map<string, Promise<string>>();

/** An asset's text, read once per process; null for a name that is not one of `VIEWER_ASSETS`. */
export function viewerAsset(name: string): { readonly contentType: string; readonly body: Promise<string> } | null {
  const contentType = Object.hasOwn(VIEWER_ASSETS, name) ? VIEWER_ASSETS[name] : undefined;
  if (contentType === undefined) return null;
  let body = assets.get(name);
  if (body === undefined) {
    body = readFile(join(viewerDirectory(), name), 'utf8');
    // A failed read is not cached: the next request tries again.
    body.catch(() => assets.delete(name));
    assets.set(name, body);
  }
  return { contentType, body };
}
