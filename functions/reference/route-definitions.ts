import type { AnyRouteDefinition } from '../core/http/route.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';

/**
 * The handler definition of any manifest route, imported on first use. The import path is a
 * template literal on purpose: esbuild turns it into a glob of every `functions/<area>/handlers/
 * *.handler.ts` and bundles them all into the reference function, each evaluated only when imported,
 * so the cloud function reaches every area's schemas without its entry naming them; locally Node
 * imports the module directly. Only the platform's own areas (under `functions/`) can be reached.
 */
export async function loadRouteDefinition(route: RouteSpec): Promise<AnyRouteDefinition> {
  if (route.folder !== undefined) throw new Error(`${route.id}: areas outside functions/ (${route.folder}) are not in the API reference.`);
  // @vite-ignore: vitest would rewrite the import into a glob of its own, keyed by paths it normalises.
  const module = (await import(/* @vite-ignore */ `../${route.area}/handlers/${route.handler}.handler.ts`)) as { default?: AnyRouteDefinition };
  if (module.default === undefined) throw new Error(`${route.id}: its handler module has no default export.`);
  return module.default;
}
