import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BoundSchedule, EntryPointDefinition } from '../../functions/core/entry/entry-point.ts';
import type { BoundService } from '../../functions/core/entry/service.ts';
import { validateQueueSpec, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { validateStorageEvents, type BoundStorageEvent } from '../../functions/core/entry/storage-event.ts';
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
  readonly queues: BoundQueue[];
  readonly storageEvents: BoundStorageEvent[];
}

/** What each entry-point kind's handler module must export. */
const DEFINE = { schedule: 'defineSchedule', queue: 'defineQueue', storageEvent: 'defineStorageEvent', service: 'defineService' } as const;

/**
 * Imports the handler module of every route and entry point of `areas`. A missing module, a
 * definition whose kind does not match the manifest (defineRoute for buffered, defineStreamRoute
 * for streaming, defineSchedule, defineQueue, defineStorageEvent or defineService for an entry
 * point), a queue's invalid limits, a storage event on an undeclared bucket or an overlapping
 * prefix, or a service on a host that has routes fails start-up.
 */
export async function loadAreas(areas: readonly AreaModule[]): Promise<LoadedAreas> {
  servicesByHost(areas);
  const loaded: LoadedAreas = { buffered: [], streaming: [], schedules: [], queues: [], storageEvents: [], services: [] };
  for (const area of areas) {
    for (const spec of area.routes) {
      const path = handlerModulePath(spec);
      const definition = await importDefault<AnyRouteDefinition>(path);
      if (spec.mode === 'buffered' && definition?.kind === 'buffered') loaded.buffered.push({ spec, definition, area });
      else if (spec.mode === 'streaming' && definition?.kind === 'streaming') loaded.streaming.push({ spec, definition, area });
      else throw new Error(`${path} must export default ${spec.mode === 'buffered' ? 'defineRoute' : 'defineStreamRoute'}(...) for route ${spec.id}`);
    }
    for (const spec of area.entryPoints) {
      const path = entryPointModulePath(spec);
      const definition = await importDefault<EntryPointDefinition>(path);
      if (spec.kind === 'schedule' && definition?.kind === 'schedule') loaded.schedules.push({ spec, definition, area });
      else if (spec.kind === 'queue' && definition?.kind === 'queue') {
        validateQueueSpec(spec);
        loaded.queues.push({ spec, definition, area });
      } else if (spec.kind === 'storageEvent' && definition?.kind === 'storageEvent') loaded.storageEvents.push({ spec, definition, area });
      else if (spec.kind === 'service' && definition?.kind === 'service') loaded.services.push({ spec, definition, area });
      else throw new Error(`${path} must export default ${DEFINE[spec.kind]}(...) for entry point ${spec.id}`);
    }
  }
  validateStorageEvents(
    loaded.storageEvents.map((b) => b.spec),
    areas.flatMap((a) => a.buckets),
  );
  return loaded;
}

async function importDefault<T>(path: string): Promise<T | undefined> {
  return ((await import(pathToFileURL(repoRoot + path).href)) as { default?: T }).default;
}
