import type { AreaModule, Host, RouteSpec, ServiceSpec } from './types.ts';

/** The service entry points of `areas`, each with its module. */
export function servicesOf(areas: readonly AreaModule[]): { spec: ServiceSpec; area: AreaModule }[] {
  return areas.flatMap((area) => area.entryPoints.filter((e): e is ServiceSpec => e.kind === 'service').map((spec) => ({ spec, area })));
}

/**
 * The service serving each host, checked the same way at local start and at synth. A service owns
 * its host whole: every path and upgrade under it goes to the service, so the host can have no
 * routes (nothing could tell which of the two a path belongs to) and only one service. The base
 * and MCP hosts are the API's and cannot be a service's.
 */
export function servicesByHost(areas: readonly AreaModule[], routes: readonly RouteSpec[] = areas.flatMap((a) => a.routes)): Map<Host, ServiceSpec> {
  const byHost = new Map<Host, ServiceSpec>();
  for (const { spec } of servicesOf(areas)) {
    if (spec.host === 'base' || spec.host === 'mcp')
      throw new Error(`Service ${spec.id} cannot serve the ${spec.host} host: it is the API's. Choose another host.`);
    const other = byHost.get(spec.host);
    if (other !== undefined) throw new Error(`Services ${other.id} and ${spec.id} both serve the ${spec.host} host; a host has at most one service.`);
    const routed = routes.filter((r) => r.host === spec.host);
    if (routed.length > 0)
      throw new Error(
        `Service ${spec.id} serves the ${spec.host} host, which also has routes (${routed.map((r) => `${r.id} ${r.method} ${r.path}`).join(', ')}): ` +
          'a host is served either by routes or by one service. Move the routes to another host or into the service.',
      );
    byHost.set(spec.host, spec);
  }
  return byHost;
}
