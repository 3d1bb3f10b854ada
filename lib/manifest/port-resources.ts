import type { TableName } from './tables.ts';
import type { AreaModule, PortResources } from './types.ts';

// Imported by the cloud composition root (functions/cloud.ts), so by every function bundle: types
// only besides this file, never the area list (lib/manifest/areas.ts) or zod.

/**
 * The kernel's ports an area may declare in `uses`, with the cloud resources behind each: shared by
 * every area or needed by the request pipeline itself (users and tokens back credential lookup).
 * Ports of one area's data are provided by that area's module (`provides`) instead. Utilities
 * without resources (config, clock, log, fetch) need no declaration.
 */
export const PORT_RESOURCES = {
  users: { tables: ['users', 'aliases'] },
  tokens: { tables: ['tokens', 'token-digests'] },
  credits: { tables: ['users', 'credit-ledger'] },
  secretBox: { secretsKey: 'seal' },
  secrets: { oauthClients: true },
  compute: { runtime: 'python' },
  mcpRuntime: { runtime: 'mcp' },
  // With the analytics counters each record adds to (functions/core/usage-counters.store.ts).
  usageLogs: { tables: ['usage-logs', 'usage-stats'], buckets: ['blobs'] },
  blobs: { buckets: ['blobs'] },
  tasks: { queues: 'own' },
  schedules: { schedules: true },
  // Declared only by an area minting run tokens outside authenticated routes (cron runs from a
  // queue); routes that authenticate get the secret anyway (KERNEL_RESOURCES).
  runTokens: { runTokenSecret: true },
  // Running an owner's agent without a credential (cron jobs, channels): the agents function's
  // chat service, invoked in the cloud, called in-process locally (functions/agents/agent-runs.ts).
  agentRuns: { agentRuns: true },
} as const satisfies Record<string, PortResources & { tables?: readonly TableName[] }>;

/** A kernel port an area may declare. */
export type KernelPortName = keyof typeof PORT_RESOURCES;

export function isKernelPort(name: string): name is KernelPortName {
  return Object.hasOwn(PORT_RESOURCES, name);
}

/** The resources behind `port` for an area of `modules`: the kernel's, or those of the area providing it. */
export function resourcesOfPort(port: string, modules: readonly AreaModule[]): PortResources {
  if (isKernelPort(port)) return PORT_RESOURCES[port];
  for (const area of modules) {
    const provision = area.provides[port];
    if (provision !== undefined) return provision.resources;
  }
  throw new Error(`No kernel port or area module provides the ${port} port.`);
}

/**
 * The kernel ports whose cloud adapter a function imports only when its areas need it: each pulls
 * an AWS SDK client (loaded at cold start even when unused) and, for the runtimes, the invoke and
 * stream decoding code, which most functions never run. The DynamoDB client is the one every
 * function loads: credential lookup and rate limits need it.
 */
export const CLOUD_ADAPTER_PORTS = ['compute', 'mcpRuntime', 'secretBox', 'taskQueue', 'blobs', 'schedules', 'agentRuns'] as const;
export type CloudAdapterPort = (typeof CLOUD_ADAPTER_PORTS)[number];

/** The adapter behind each resource a port may need: the same resources `resourcesOf` grants. */
function adapterPortsOfResources(resources: PortResources): CloudAdapterPort[] {
  return [
    ...(resources.runtime === 'python' ? (['compute'] as const) : []),
    ...(resources.runtime === 'mcp' ? (['mcpRuntime'] as const) : []),
    ...(resources.secretsKey !== undefined ? (['secretBox'] as const) : []),
    ...(resources.queues === 'own' ? (['taskQueue'] as const) : []),
    // The kernel's `blobs` store (createPorts); a port over an area's own bucket builds its own client.
    ...(resources.buckets?.includes('blobs') ? (['blobs'] as const) : []),
    ...(resources.schedules === true ? (['schedules'] as const) : []),
    ...(resources.agentRuns === true ? (['agentRuns'] as const) : []),
  ];
}

/**
 * The cloud adapters a function serving `served` needs, each with the first served area whose
 * ports (used or provided, directly or through a provided port's resources, as `resourcesOf`
 * grants them) reach it. The generated entry wires exactly these (lib/cloud/function-entries.ts)
 * and the composition root checks at start that it did (functions/cloud.ts). Used ports are looked
 * up in `served`, then `modules`.
 */
export function cloudAdapterPortsOf(served: readonly AreaModule[], modules: readonly AreaModule[]): Map<CloudAdapterPort, string> {
  const needed = new Map<CloudAdapterPort, string>();
  for (const area of served)
    for (const port of [...area.uses, ...Object.keys(area.provides)])
      for (const adapter of adapterPortsOfResources(resourcesOfPort(port, [...served, ...modules]))) if (!needed.has(adapter)) needed.set(adapter, area.name);
  // In CLOUD_ADAPTER_PORTS order, so generated entries do not change with the order of `uses`.
  return new Map(CLOUD_ADAPTER_PORTS.filter((port) => needed.has(port)).map((port) => [port, needed.get(port)!]));
}
