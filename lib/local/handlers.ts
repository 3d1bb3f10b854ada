import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BoundSchedule, EntryPointDefinition } from '../../functions/core/entry/entry-point.ts';
import type { BoundService } from '../../functions/core/entry/service.ts';
import { validateQueueSpec, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { validateStorageEvents, type BoundStorageEvent } from '../../functions/core/entry/storage-event.ts';
import type { AnyRouteDefinition, BoundRoute, BoundStreamRoute } from '../../functions/core/http/route.ts';
import { entryPointModulePath, handlerModulePath } from '../manifest/routes.ts';
import { servicesByHost } from '../manifest/services.ts';
import type { AreaModule, RouteSpec } from '../manifest/types.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Imports the handler module at a manifest path (`functions/<area>/handlers/<name>.handler.ts`). */
export type ImportHandlerModule = (modulePath: string) => Promise<unknown>;

/**
 * Imports by file path from the repository root: what `npm run dev` and the tests use (tsx compiles
 * each module as it is imported), and what test fixtures' own areas need.
 */
export const importFromSource: ImportHandlerModule = (modulePath) => import(pathToFileURL(repoRoot + modulePath).href);

/**
 * The built start's importer (lib/local/build.ts): a bundle cannot import a `.ts` path, so the build
 * generates one static import thunk per handler module of the manifest, each its own chunk.
 */
export function importFromBundle(modules: Readonly<Record<string, () => Promise<unknown>>>): ImportHandlerModule {
  return (modulePath) => {
    const load = modules[modulePath];
    if (load === undefined) return Promise.reject(new Error(`${modulePath} is not in the local build; is its area in lib/manifest/areas.ts?`));
    return load();
  };
}

/**
 * A route whose handler module is imported the first time it is called: start-up needs only the
 * specs (the route table), and most routes of a local platform are never called in a session.
 */
export interface LazyRoute<B extends BoundRoute | BoundStreamRoute> {
  readonly spec: RouteSpec;
  readonly area: AreaModule;
  /**
   * The bound route. Concurrent first calls share one import; a failed import is not remembered,
   * so the next call tries again (the file may have been fixed, or the failure was transient).
   */
  load(): Promise<B>;
}

export interface LoadedAreas {
  readonly buffered: LazyRoute<BoundRoute>[];
  readonly streaming: LazyRoute<BoundStreamRoute>[];
  readonly schedules: BoundSchedule[];
  readonly services: BoundService[];
  readonly queues: BoundQueue[];
  readonly storageEvents: BoundStorageEvent[];
}

/** What each entry-point kind's handler module must export. */
const DEFINE = { schedule: 'defineSchedule', queue: 'defineQueue', storageEvent: 'defineStorageEvent', service: 'defineService' } as const;

/**
 * Prepares every route and entry point of `areas`. Routes are lazy (`LazyRoute`): a route's module
 * that is missing or exports the wrong kind of definition (defineRoute for buffered,
 * defineStreamRoute for streaming) fails its calls with a 500 and a logged error, and
 * `loadEveryRoute` makes the same check for all of them at once (the tests do).
 *
 * Entry points are imported now, as before: a service must run from the start, and a schedule,
 * queue or storage event runs with no caller to show a failed import to, so a missing module, a
 * definition of the wrong kind (defineSchedule, defineQueue, defineStorageEvent, defineService), a
 * queue's invalid limits, a storage event on an undeclared bucket or an overlapping prefix, or a
 * service on a host that has routes fails start-up instead of a background run hours later.
 */
export async function loadAreas(areas: readonly AreaModule[], importModule: ImportHandlerModule = importFromSource): Promise<LoadedAreas> {
  servicesByHost(areas);
  const loaded: LoadedAreas = { buffered: [], streaming: [], schedules: [], queues: [], storageEvents: [], services: [] };
  // The entry points' modules all at once: each is a chunk to read (or, under tsx, a module to
  // compile) of its own, and one after another the start waited on each read in turn.
  const imported = new Map(
    await Promise.all(
      areas.flatMap((area) =>
        area.entryPoints.map(async (spec) => [spec, await importDefault<EntryPointDefinition>(importModule, entryPointModulePath(spec))] as const),
      ),
    ),
  );
  for (const area of areas) {
    for (const spec of area.routes) {
      if (spec.mode === 'buffered') {
        loaded.buffered.push(lazyRoute(spec, area, importModule, (definition) => (definition?.kind === 'buffered' ? { spec, definition, area } : null)));
      } else {
        loaded.streaming.push(lazyRoute(spec, area, importModule, (definition) => (definition?.kind === 'streaming' ? { spec, definition, area } : null)));
      }
    }
    for (const spec of area.entryPoints) {
      const path = entryPointModulePath(spec);
      const definition = imported.get(spec);
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

/** A route whose definition is at hand already (tests serving a definition of their own). */
export function boundRoute<B extends BoundRoute | BoundStreamRoute>(bound: B): LazyRoute<B> {
  return { spec: bound.spec, area: bound.area, load: () => Promise.resolve(bound) };
}

/** Imports every route's handler module now; rejects with the first route whose module is missing or of the wrong kind. */
export async function loadEveryRoute(loaded: Pick<LoadedAreas, 'buffered' | 'streaming'>): Promise<(BoundRoute | BoundStreamRoute)[]> {
  return Promise.all([...loaded.buffered, ...loaded.streaming].map((route) => route.load()));
}

function lazyRoute<B extends BoundRoute | BoundStreamRoute>(
  spec: RouteSpec,
  area: AreaModule,
  importModule: ImportHandlerModule,
  bind: (definition: AnyRouteDefinition | undefined) => B | null,
): LazyRoute<B> {
  let loading: Promise<B> | null = null;
  const path = handlerModulePath(spec);
  return {
    spec,
    area,
    load() {
      if (loading !== null) return loading;
      const attempt = importDefault<AnyRouteDefinition>(importModule, path).then((definition) => {
        const bound = bind(definition);
        if (bound === null)
          throw new Error(`${path} must export default ${spec.mode === 'buffered' ? 'defineRoute' : 'defineStreamRoute'}(...) for route ${spec.id}`);
        return bound;
      });
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = null;
      });
      return attempt;
    },
  };
}

async function importDefault<T>(importModule: ImportHandlerModule, path: string): Promise<T | undefined> {
  return ((await importModule(path)) as { default?: T }).default;
}
