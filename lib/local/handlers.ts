import { fileURLToPath, pathToFileURL } from 'node:url';
import { handlerModulePath } from '../manifest/routes.ts';
import type { RouteSpec } from '../manifest/types.ts';
import type { AnyRouteDefinition, BoundRoute, BoundStreamRoute } from '../../functions/core/http/route.ts';
import { areaNamed } from '../manifest/areas.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface LoadedRoutes {
  readonly buffered: BoundRoute[];
  readonly streaming: BoundStreamRoute[];
}

/**
 * Imports the handler module of every route. A missing module, or a definition whose kind does not
 * match the manifest's mode (defineRoute for buffered, defineStreamRoute for streaming), fails start-up.
 */
export async function loadRoutes(routes: readonly RouteSpec[]): Promise<LoadedRoutes> {
  const loaded: LoadedRoutes = { buffered: [], streaming: [] };
  for (const spec of routes) {
    const path = handlerModulePath(spec);
    const definition = ((await import(pathToFileURL(repoRoot + path).href)) as { default?: AnyRouteDefinition }).default;
    const area = areaNamed(spec.area);
    if (spec.mode === 'buffered' && definition?.kind === 'buffered') loaded.buffered.push({ spec, definition, area });
    else if (spec.mode === 'streaming' && definition?.kind === 'streaming') loaded.streaming.push({ spec, definition, area });
    else throw new Error(`${path} must export default ${spec.mode === 'buffered' ? 'defineRoute' : 'defineStreamRoute'}(...) for route ${spec.id}`);
  }
  return loaded;
}
