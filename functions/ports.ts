import type { areas } from '../lib/manifest/areas.ts';
import type { AgentRuns } from './agents/agent-runs.ts';
import type { AreaModule, PortProvision } from '../lib/manifest/types.ts';
import type { CredentialLookup, IdentityVerifier } from './core/auth/credentials.ts';
import type { RunTokens } from './core/auth/run-token.ts';
import type { BlobStore } from './core/blobs.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { Config } from './core/config.ts';
import { createCredits, type Credits } from './core/credits.ts';
import { createDb, type Db } from './core/db/dynamo.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { createRateLimiter, type RateLimiter } from './core/rate-limit.ts';
import type { SecretBox } from './core/secret-box.ts';
import type { SecretReader } from './core/secret-reader.ts';
import { createUsageLogWriter, type UsageLogWriter } from './core/usage-log.ts';
import { createPlatformTasks, tasksForArea, type TaskQueue, type Tasks } from './core/tasks/tasks.ts';
import type { Compute } from './runtimes/compute.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import { createTokenStore, type TokenStore } from './tokens/token.store.ts';
import { createCredentialLookup } from './users/credential-lookup.ts';
import type { Schedules } from './core/tasks/schedules.ts';
import { createUserStore, type UserStore } from './users/user.store.ts';

/**
 * The ports every area shares, built by `createPorts` before any area's: configuration, the clock,
 * the logger, the stores and adapters the request pipeline runs on, and the runtimes.
 */
export interface KernelPorts {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly db: Db;
  readonly blobs: BlobStore;
  readonly usageLogs: UsageLogWriter;
  /** Outbound HTTP (OAuth token endpoints, webhooks); a port so tests can watch or replace it. */
  readonly fetch: typeof fetch;
  readonly credentials: CredentialLookup;
  readonly identity: IdentityVerifier | null;
  /** Short-lived credentials of runs calling back into the platform (agent -> MCP). */
  readonly runTokens: RunTokens;
  readonly credits: Credits;
  readonly rateLimiter: RateLimiter;
  readonly users: UserStore;
  readonly tokens: TokenStore;
  readonly secretBox: SecretBox;
  /**
   * Operator secrets kept in a secret store and named by ARN in the configuration (OAuth client
   * secrets): Secrets Manager in the cloud; null locally, where the configuration holds the values.
   */
  readonly secrets: SecretReader | null;
  /** Runs user code: local runtime processes, or the runtime Lambda in the cloud. */
  readonly compute: Compute;
  /** Runs user MCP servers: one Node process per tenant locally, the MCP runtime Lambda in the cloud. */
  readonly mcpRuntime: McpRuntime;
  /** Hands work to the area's own queue entry points; usable only through an area's view (`portsForArea`). */
  readonly tasks: Tasks;
  /** Timetables made at run time (cron jobs), each sending its due times to a queue entry point. */
  readonly schedules: Schedules;
  /**
   * Runs an owner's agent on the platform's behalf (cron jobs, channels): the chat service, in
   * this process locally, behind the agents function in the cloud. No credential, no HTTP.
   */
  readonly agentRuns: AgentRuns;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The ports one area module provides, by name, with the types its `create` functions return. */
export type ProvidedPorts<A> = A extends { readonly provides: infer P } ? { readonly [K in keyof P]: P[K] extends PortProvision<infer T> ? T : never } : never;

/** The ports the listed areas provide (lib/manifest/areas.ts): a module's ports join by being listed. */
export type AreaPorts = UnionToIntersection<ProvidedPorts<(typeof areas)[number]>>;

/**
 * Everything a handler may reach: the kernel's ports and those the areas provide. Built once per
 * process by a composition root (`functions/cloud.ts` for Lambda, `lib/local` for `npm start`);
 * nothing else chooses adapters. Handlers see their area's view of it (`portsForArea`).
 */
export type Ports = KernelPorts & AreaPorts;

/** Adapters that differ between the cloud and the local wiring. */
export interface PortAdapters {
  readonly identity: IdentityVerifier | null;
  readonly runTokens: RunTokens;
  readonly secretBox: SecretBox;
  readonly compute: Compute;
  readonly mcpRuntime: McpRuntime;
  /** Keeps tasks until their queue entry point runs them: SQS in the cloud, the local persistent queue. */
  readonly taskQueue: TaskQueue;
  /** Run-time schedules: EventBridge Scheduler in the cloud, the local platform's timers. */
  readonly schedules: Schedules;
  /** The chat service in this process (locally), or the agents function invoked through the Lambda API (cloud). */
  readonly agentRuns: AgentRuns;
  /**
   * The `blobs` bucket: S3 in both wirings (s3rver locally). An adapter, not built here, so a cloud
   * function that uses neither blobs nor usage logs does not load the S3 client at cold start.
   */
  readonly blobs: BlobStore;
  /** @default null: no secret store (the local platform) */
  readonly secrets?: SecretReader | null;
  readonly clock?: Clock;
  readonly log?: Logger;
}

/** Builds the kernel's ports, then the ports `modules` provide, from them. */
export function createPorts(config: Config, adapters: PortAdapters, modules: readonly AreaModule[]): Ports {
  const clock = adapters.clock ?? systemClock;
  const log = adapters.log ?? createLogger(config.LOG_LEVEL, { stage: config.STAGE });
  const db = createDb(config);
  const users = createUserStore(db);
  const tokens = createTokenStore(db);
  const credits = createCredits(db, clock, config.MONTHLY_FREE_CREDITS);
  const blobs = adapters.blobs;
  const kernel: KernelPorts = {
    config,
    clock,
    log,
    db,
    blobs,
    usageLogs: createUsageLogWriter(db, blobs, clock, config.USAGE_LOG_RETENTION_DAYS),
    // Through a wrapper so `this` is never the ports object.
    fetch: (input, init) => globalThis.fetch(input, init),
    users,
    tokens,
    credits,
    secretBox: adapters.secretBox,
    secrets: adapters.secrets ?? null,
    compute: adapters.compute,
    mcpRuntime: adapters.mcpRuntime,
    tasks: createPlatformTasks(adapters.taskQueue),
    schedules: adapters.schedules,
    agentRuns: adapters.agentRuns,
    identity: adapters.identity,
    runTokens: adapters.runTokens,
    credentials: createCredentialLookup({ users, tokens, credits, clock, db }),
    rateLimiter: createRateLimiter(db, clock),
  };
  const provided: Record<string, unknown> = {};
  for (const area of modules) for (const [name, provision] of Object.entries(area.provides)) provided[name] = provision.create(kernel);
  // Checked by `checkAreas` and by the AreaPorts type: the listed modules provide exactly these.
  return { ...kernel, ...provided } as Ports;
}

/** Members every area may use without declaring them: what the pipeline itself runs on, and utilities. */
const UNDECLARED_OK: ReadonlySet<string> = new Set(['config', 'clock', 'log', 'fetch', 'credentials', 'identity', 'runTokens', 'rateLimiter']);

/** An area's code touched a port its module does not declare: a bug, which the cloud would show as AccessDenied. */
export class UndeclaredPortError extends Error {}

const views = new WeakMap<Ports, WeakMap<AreaModule, Ports>>();

/**
 * The platform as `area`'s handlers see it: declared ports and the kernel's, nothing else. Both
 * wirings hand this to handlers, so an undeclared use fails in every local test instead of as a
 * missing grant in the cloud, where a function is granted only its area's declared ports.
 */
export function portsForArea(platform: Ports, area: AreaModule): Ports {
  let byArea = views.get(platform);
  if (byArea === undefined) views.set(platform, (byArea = new WeakMap()));
  const existing = byArea.get(area);
  if (existing !== undefined) return existing;
  const allowed = new Set<string>([...UNDECLARED_OK, ...area.uses, ...Object.keys(area.provides)]);
  // Getters, not copies: a member replaced later (tests swap `fetch`) is seen through the view. The
  // undeclared ones are not enumerable, so `{ ...platform, log }` in a handler leaves them out
  // instead of touching them.
  const view = {} as Ports;
  for (const name of Object.keys(platform)) {
    const declared = allowed.has(name);
    Object.defineProperty(view, name, {
      enumerable: declared,
      get: declared
        ? // `tasks` is bound to the area: it reaches the area's own queues only.
          name === 'tasks'
          ? () => tasksForArea(platform.tasks, area)
          : () => platform[name as keyof Ports]
        : () => {
            throw new UndeclaredPortError(
              `The ${area.name} area used the ${name} port without declaring it in functions/${area.name}/${area.name}.module.ts (uses).`,
            );
          },
    });
  }
  // A cloud function builds its platform from its own modules only (functions/cloud.ts): a declared
  // port no listed module provides would otherwise read as undefined far from the cause.
  for (const name of [...area.uses, ...Object.keys(area.provides)]) {
    if (Object.hasOwn(view, name)) continue;
    Object.defineProperty(view, name, {
      enumerable: false,
      get: () => {
        throw new Error(
          `The ${area.name} area uses the ${name} port, which no area module of this platform provides (lib/manifest/ports.ts, modulesOfFunction).`,
        );
      },
    });
  }
  byArea.set(area, view);
  return view;
}
