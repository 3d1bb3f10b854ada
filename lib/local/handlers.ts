import { fileURLToPath, pathToFileURL } from 'node:url';
import { assertWired, type BoundSchedule, type EntryPointDefinition } from '../../functions/core/entry/entry-point.ts';
import type { BoundService, ServiceDefinition } from '../../functions/core/entry/service.ts';
import type { AnyRouteDefinition, BoundRoute, BoundStreamRoute } from '../../functions/core/http/route.ts';
import { entryPointModulePath, handlerModulePath } from '../manifest/routes.ts';
import { servicesByHost } from '../manifest/services.ts';
import type { AreaModule } from '../manifest/types.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface LoadedAreas {
  readonly buffered: BoundRoute[];
  readonly streaming: BoundStreamRoute[];
  readonly schedules: BoundSchedule[];
  readonly services: BoundService[];
}

/**
 * Imports the handler module of every route and entry point of `areas`. A missing module, a
 * definition whose kind does not match the manifest (defineRoute for buffered, defineStreamRoute
 * for streaming, defineSchedule for a schedule, defineService for a service), an entry-point kind
 * without a wiring, or a service on a host that has routes fails start-up.
 */
export async function loadAreas(areas: readonly AreaModule[]): Promise<LoadedAreas> {
  servicesByHost(areas);
  const loaded: LoadedAreas = { buffered: [], streaming: [], schedules: [], services: [] };
  for (const area of areas) {
    for (const spec of area.routes) {
      const path = handlerModulePath(spec);
      const definition = await importDefault<AnyRouteDefinition>(path);
      if (spec.mode === 'buffered' && definition?.kind === 'buffered') loaded.buffered.push({ spec, definition, area });
      else if (spec.mode === 'streaming' && definition?.kind === 'streaming') loaded.streaming.push({ spec, definition, area });
      else throw new Error(`${path} must export default ${spec.mode === 'buffered' ? 'defineRoute' : 'defineStreamRoute'}(...) for route ${spec.id}`);
    }
    for (const spec of area.entryPoints) {
      if (spec.kind === 'service') {
        const path = entryPointModulePath(spec);
        const definition = await importDefault<ServiceDefinition>(path);
        if (definition?.kind !== 'service') throw new Error(`${path} must export default defineService(...) for entry point ${spec.id}`);
        loaded.services.push({ spec, definition, area });
        continue;
      }
      assertWired(spec);
      const path = entryPointModulePath(spec);
      const definition = await importDefault<EntryPointDefinition>(path);
      if (definition?.kind !== 'schedule') throw new Error(`${path} must export default defineSchedule(...) for entry point ${spec.id}`);
      loaded.schedules.push({ spec, definition, area });
    }
  }
  return loaded;
}

async function importDefault<T>(path: string): Promise<T | undefined> {
  return ((await import(pathToFileURL(repoRoot + path).href)) as { default?: T }).default;
}
