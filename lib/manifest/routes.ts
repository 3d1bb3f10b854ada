import { areas } from './areas.ts';
import type { AreaModule, EntryPointSpec, RouteSpec } from './types.ts';

/**
 * Every HTTP route of the platform, from the area modules (their own files list them, with the
 * reasons for their limits). The CDK stack and the local server are both built from this list.
 *
 * `callers: 'role'` marks what role and run tokens may do: run (chat, actions, MCP endpoints) and
 * read (resources, conversations, logs, the caller's own account and credits). Everything that
 * creates, changes or deletes, and every token, key and account route, keeps the `full` default.
 * Public routes say `role` because they admit anyone; they never read the credential.
 */
export const routes: readonly RouteSpec[] = areas.flatMap((area) => area.routes);

/** Areas in route order, each with its routes: one cloud function per area. */
export function routesByArea(all: readonly RouteSpec[] = routes): Map<string, RouteSpec[]> {
  const byArea = new Map<string, RouteSpec[]>();
  for (const r of all) {
    const list = byArea.get(r.area) ?? [];
    list.push(r);
    byArea.set(r.area, list);
  }
  return byArea;
}

/**
 * Where an area's module is and what it is exported as: `<folder>/<name>.module.ts`, exporting
 * `<name in camelCase>Area` (`functions/users/users.module.ts`, `usersArea`). Generated entries
 * import each module their function needs from there (lib/cloud/function-entries.ts), and a unit
 * test checks that every listed module follows it.
 */
export function areaModuleImport(area: Pick<AreaModule, 'name' | 'folder'>): { readonly path: string; readonly exportName: string } {
  return {
    path: `${area.folder ?? `functions/${area.name}`}/${area.name}.module.ts`,
    exportName: `${area.name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Area`,
  };
}

/** Module path of a route's handler, relative to the repository root. */
export function handlerModulePath(r: Pick<RouteSpec, 'area' | 'handler' | 'folder'>): string {
  return `${r.folder ?? `functions/${r.area}`}/handlers/${r.handler}.handler.ts`;
}

/** Every entry point other than HTTP routes (schedules, queues, storage events, services). */
export const entryPoints: readonly EntryPointSpec[] = areas.flatMap((area) => area.entryPoints);

// In define.ts, which imports no module list, so functions/cloud.ts can use it without bundling every area.
export { entryPointsOf } from './define.ts';

/** Module path of an entry point's handler: `functions/<area>/handlers/<handler>.<kind>.ts`. */
export function entryPointModulePath(e: Pick<EntryPointSpec, 'area' | 'handler' | 'kind'> & { readonly folder?: string }): string {
  const suffix = { schedule: 'schedule', queue: 'queue', storageEvent: 'storage', service: 'server' }[e.kind];
  return `${e.folder ?? `functions/${e.area}`}/handlers/${e.handler}.${suffix}.ts`;
}
