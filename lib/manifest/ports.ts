import * as z from 'zod';
import { KERNEL_SETTINGS } from '../../functions/core/config.ts';
import { areas } from './areas.ts';
import { isKernelPort, resourcesOfPort } from './port-resources.ts';
import type { TableName } from './tables.ts';
import type { AreaModule } from './types.ts';

export { PORT_RESOURCES, type KernelPortName } from './port-resources.ts';

/**
 * Checks a module list before anything is built from it: unique area names, every used port
 * provided (by the kernel or exactly one area), every table and bucket a port names owned by some
 * area, every setting declared once and optional or defaulted. Every wiring runs it, so a typo
 * fails at start and at synth, naming the module to fix.
 */
export function checkAreas(modules: readonly AreaModule[]): void {
  const problems: string[] = [];
  const tables = new Set(modules.flatMap((a) => a.tables.map((t) => t.name)));
  const buckets = new Set(modules.flatMap((a) => a.buckets.map((b) => b.name)));
  const providers = new Map<string, string>();
  const names = new Set<string>();
  for (const area of modules) {
    if (names.has(area.name)) problems.push(`two area modules are named ${area.name}`);
    names.add(area.name);
    for (const [port, provision] of Object.entries(area.provides)) {
      const other = providers.get(port);
      if (isKernelPort(port) || KERNEL_MEMBERS.has(port)) problems.push(`${area.name} provides ${port}, a kernel port`);
      else if (other !== undefined) problems.push(`${area.name} and ${other} both provide the ${port} port`);
      providers.set(port, area.name);
      for (const t of provision.resources.tables ?? [])
        if (!tables.has(t)) problems.push(`${area.name}'s ${port} port names the table ${t}, which no area owns`);
      for (const b of provision.resources.buckets ?? [])
        if (!buckets.has(b)) problems.push(`${area.name}'s ${port} port names the bucket ${b}, which no area owns`);
    }
  }
  const settings = new Map<string, string>();
  for (const area of modules) {
    for (const name of Object.keys(area.settings)) {
      const other = settings.get(name);
      if (KERNEL_SETTINGS.has(name)) problems.push(`${area.name} declares the setting ${name}, a kernel setting`);
      else if (other !== undefined) problems.push(`${area.name} and ${other} both declare the setting ${name}`);
      settings.set(name, area.name);
    }
    // Functions of other areas do not receive the variables, so absence must parse.
    const absent = z.object(area.settings).safeParse({});
    if (!absent.success) problems.push(`${area.name}'s settings ${absent.error.issues.map((i) => i.path.join('.')).join(', ')} need a default or .optional()`);
  }
  for (const area of modules)
    for (const port of area.uses)
      if (!isKernelPort(port) && !providers.has(port)) problems.push(`${area.name} uses the ${port} port, which neither the kernel nor any area provides`);
  if (problems.length > 0) throw new Error(`Area modules: ${problems.join('; ')}. Fix the modules listed in lib/manifest/areas.ts.`);
}

/**
 * The modules a function serving `served` builds its platform from: the served areas, then the
 * area providing each port they use that the kernel does not. A provided port is built from the
 * kernel alone (`providePort`), so no further areas are needed. Generated entries import exactly
 * these (lib/cloud/function-entries.ts), so a bundle holds no other area's code; `portsForArea`
 * still hides every undeclared port, as with the whole list.
 */
export function modulesOfFunction(served: readonly AreaModule[], modules: readonly AreaModule[] = areas): AreaModule[] {
  const needed = new Map<string, AreaModule>(served.map((area) => [area.name, area]));
  for (const area of served) {
    for (const port of area.uses) {
      if (isKernelPort(port) || [...needed.values()].some((m) => Object.hasOwn(m.provides, port))) continue;
      const provider = modules.find((m) => Object.hasOwn(m.provides, port));
      if (provider === undefined) throw new Error(`No kernel port or area module provides the ${port} port ${area.name} uses.`);
      needed.set(provider.name, provider);
    }
  }
  return [...needed.values()];
}

/** Members of `Ports` no area may provide: the kernel's utilities and what the pipeline runs on. */
const KERNEL_MEMBERS: ReadonlySet<string> = new Set([
  'config',
  'clock',
  'log',
  'db',
  'fetch',
  'credentials',
  'identity',
  'runTokens',
  'rateLimiter',
  'admission',
]);

/**
 * What the request pipeline itself needs to authenticate callers and apply rate limits: credential
 * lookup (users, tokens, their digests, the monthly credit grant), the rate-limit counters and the
 * run-token secret. Every area with a route that reads credentials or is rate limited gets it.
 */
export const KERNEL_RESOURCES = {
  tables: ['users', 'tokens', 'token-digests', 'credit-ledger', 'rate-limits'],
  runTokenSecret: true,
} as const satisfies { tables: readonly TableName[]; runTokenSecret: true };

/** Everything a function serving `served` (one area, or the areas behind a streaming host) may reach. */
export interface FunctionResources {
  readonly tables: ReadonlySet<string>;
  readonly buckets: ReadonlySet<string>;
  readonly secretsKey: 'open' | 'seal' | null;
  readonly oauthClients: boolean;
  /** May invoke the search engine's embedding model (when the deployment configures one). */
  readonly embeddings: boolean;
  /** May invalidate the site distribution's cache. */
  readonly siteCache: boolean;
  readonly runTokenSecret: boolean;
  /** Some served route takes credentials, so the function may verify identity-provider session tokens. */
  readonly authenticates: boolean;
  readonly runtimes: ReadonlySet<'python' | 'mcp'>;
  /** Areas whose own queues the function may send tasks to: those it serves that declare `tasks`. */
  readonly queueAreas: ReadonlySet<string>;
  /** Areas whose run-time schedules (to their own queues) the function may manage: those it serves that declare `schedules`. */
  readonly scheduleAreas: ReadonlySet<string>;
  /** May run owners' agents through the agents function (the `agentRuns` port). */
  readonly agentRuns: boolean;
  /** May launch and drive code server instances (the code-server area's `machines` port). */
  readonly machines: boolean;
}

/**
 * The union of the kernel's needs (when any served route authenticates or is rate limited) and the
 * resources of the ports the served areas use or provide. Used ports are looked up in `served`, then `modules`.
 */
export function resourcesOf(
  served: readonly AreaModule[],
  routes: AreaModule['routes'] = served.flatMap((a) => a.routes),
  modules: readonly AreaModule[] = areas,
): FunctionResources {
  const tables = new Set<string>();
  const buckets = new Set<string>();
  const runtimes = new Set<'python' | 'mcp'>();
  const queueAreas = new Set<string>();
  const scheduleAreas = new Set<string>();
  let runTokenSecret = false;
  let secretsKey: 'open' | 'seal' | null = null;
  let oauthClients = false;
  let embeddings = false;
  let siteCache = false;
  let agentRuns = false;
  let machines = false;
  const kernel = routes.some((r) => r.auth !== 'public' || r.rateLimit !== undefined);
  if (kernel) for (const t of KERNEL_RESOURCES.tables) tables.add(t);
  for (const area of served) {
    for (const port of [...area.uses, ...Object.keys(area.provides)]) {
      const needs = resourcesOfPort(port, [...served, ...modules]);
      for (const t of needs.tables ?? []) tables.add(t);
      for (const b of needs.buckets ?? []) buckets.add(b);
      if (needs.runtime) runtimes.add(needs.runtime);
      if (needs.oauthClients) oauthClients = true;
      if (needs.embeddings) embeddings = true;
      if (needs.siteCache) siteCache = true;
      if (needs.agentRuns) agentRuns = true;
      if (needs.machines) machines = true;
      if (needs.queues === 'own') queueAreas.add(area.name);
      if (needs.schedules) scheduleAreas.add(area.name);
      if (needs.runTokenSecret) runTokenSecret = true;
      if (needs.secretsKey === 'seal' || (needs.secretsKey === 'open' && secretsKey === null)) secretsKey = needs.secretsKey;
    }
  }
  const authenticates = routes.some((r) => r.auth !== 'public');
  return {
    tables,
    buckets,
    secretsKey,
    oauthClients,
    embeddings,
    siteCache,
    runTokenSecret: kernel || runTokenSecret,
    authenticates,
    runtimes,
    queueAreas,
    scheduleAreas,
    agentRuns,
    machines,
  };
}
