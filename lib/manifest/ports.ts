import type { BucketName, TableName } from './index.ts';
import type { AreaModule, PortName } from './types.ts';

/** What a port reaches in the cloud, so a function is granted exactly what its area's ports need. */
export interface PortResources {
  readonly tables?: readonly TableName[];
  readonly buckets?: readonly BucketName[];
  /** The key that seals users' third-party keys: `open` decrypts only, `seal` also makes data keys. */
  readonly secretsKey?: 'open' | 'seal';
  /** The OAuth providers' client secrets (and their settings). */
  readonly oauthClients?: true;
  /** The runtime functions user code runs in. */
  readonly runtime?: 'python' | 'mcp';
  /** Sending to the declaring area's own queue entry points (never another area's). */
  readonly queues?: 'own';
}

/**
 * The cloud resources behind each port an area may declare. A port absent here is a kernel port
 * (below) or a utility without resources (config, clock, log, fetch).
 */
export const PORT_RESOURCES: Readonly<Record<PortName, PortResources>> = {
  users: { tables: ['users', 'aliases'] },
  tokens: { tables: ['tokens', 'token-digests'] },
  credits: { tables: ['users', 'credit-ledger'] },
  keys: { tables: ['keys'] },
  keysReader: { tables: ['keys'], secretsKey: 'open' },
  secretBox: { secretsKey: 'seal' },
  secrets: { oauthClients: true },
  agents: { tables: ['agents', 'agent-names'] },
  conversations: { tables: ['conversations'], buckets: ['blobs'] },
  actions: { tables: ['actions'] },
  compute: { runtime: 'python' },
  mcpServers: { tables: ['mcp-servers', 'mcp-server-names', 'mcp-versions'], buckets: ['blobs'] },
  mcpRuntime: { runtime: 'mcp' },
  logs: { tables: ['usage-logs'], buckets: ['blobs'] },
  usageLogs: { tables: ['usage-logs'], buckets: ['blobs'] },
  oauthStates: { tables: ['oauth-states'] },
  blobs: { buckets: ['blobs'] },
  tasks: { queues: 'own' },
};

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
  readonly tables: ReadonlySet<TableName>;
  readonly buckets: ReadonlySet<BucketName>;
  readonly secretsKey: 'open' | 'seal' | null;
  readonly oauthClients: boolean;
  readonly runTokenSecret: boolean;
  readonly runtimes: ReadonlySet<'python' | 'mcp'>;
  /** Areas whose own queues the function may send tasks to: those it serves that declare `tasks`. */
  readonly queueAreas: ReadonlySet<string>;
}

/**
 * The union of the kernel's needs (when any served route authenticates or is rate limited) and the
 * declared ports' resources of the areas a function serves.
 */
export function resourcesOf(served: readonly AreaModule[], routes: AreaModule['routes'] = served.flatMap((a) => a.routes)): FunctionResources {
  const tables = new Set<TableName>();
  const buckets = new Set<BucketName>();
  const runtimes = new Set<'python' | 'mcp'>();
  const queueAreas = new Set<string>();
  let secretsKey: 'open' | 'seal' | null = null;
  let oauthClients = false;
  const kernel = routes.some((r) => r.auth !== 'public' || r.rateLimit !== undefined);
  if (kernel) for (const t of KERNEL_RESOURCES.tables) tables.add(t);
  for (const area of served) {
    for (const port of area.uses) {
      const needs = PORT_RESOURCES[port];
      for (const t of needs.tables ?? []) tables.add(t);
      for (const b of needs.buckets ?? []) buckets.add(b);
      if (needs.runtime) runtimes.add(needs.runtime);
      if (needs.oauthClients) oauthClients = true;
      if (needs.queues === 'own') queueAreas.add(area.name);
      if (needs.secretsKey === 'seal' || (needs.secretsKey === 'open' && secretsKey === null)) secretsKey = needs.secretsKey;
    }
  }
  return { tables, buckets, secretsKey, oauthClients, runTokenSecret: kernel, runtimes, queueAreas };
}
