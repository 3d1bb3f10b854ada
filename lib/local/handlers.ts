import { fileURLToPath, pathToFileURL } from 'node:url';
import { handlerModulePath } from '../manifest/routes.ts';
import type { RouteSpec } from '../manifest/types.ts';
import type { BoundRoute } from '../../functions/core/http/api-gateway.ts';
import type { RouteDefinition } from '../../functions/core/http/route.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Imports the handler module of every route; a missing module or default export fails start-up. */
export async function loadRoutes(routes: readonly RouteSpec[]): Promise<BoundRoute[]> {
  return Promise.all(
    routes.map(async (spec) => {
      const path = handlerModulePath(spec);
      const module = (await import(pathToFileURL(repoRoot + path).href)) as { default?: RouteDefinition };
      if (module.default?.kind !== 'buffered') throw new Error(`${path} must export default defineRoute(...) for route ${spec.id}`);
      return { spec, definition: module.default };
    }),
  );
}
