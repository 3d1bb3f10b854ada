import type { AgentRuns } from './agents/agent-runs.ts';
import type { AreaModule, PortProvision } from '../lib/manifest/types.ts';
import type { IdentityVerifier } from './core/auth/credentials.ts';
import type { RunTokens } from './core/auth/run-token.ts';
import type { BlobStore } from './core/blobs.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { Config } from './core/config.ts';
import { createCredits } from './core/credits.ts';
import { createDb } from './core/db/dynamo.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { createAdmission } from './core/admission.ts';
import { createRateLimiter } from './core/rate-limit.ts';
import type { SecretBox } from './core/secret-box.ts';
import type { SecretReader } from './core/secret-reader.ts';
import { createUsageLogWriter } from './core/usage-log.ts';
import { createUsageCounters } from './core/usage-counters.store.ts';
import { createPlatformTasks, tasksForArea, type TaskQueue } from './core/tasks/tasks.ts';
import type { Compute } from './runtimes/compute.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import { createTokenStore } from './tokens/token.store.ts';
import { createCredentialLookup } from './users/credential-lookup.ts';
import type { Schedules } from './core/tasks/schedules.ts';
import type { ListedArea } from './core/area-list.ts';
import type { KernelPorts } from './kernel-ports.ts';
import { createUserStore } from './users/user.store.ts';

export type { KernelPorts } from './kernel-ports.ts';

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The ports one area module provides, by name, with the types its `create` functions return. */
export type ProvidedPorts<A> = A extends { readonly provides: infer P } ? { readonly [K in keyof P]: P[K] extends PortProvision<infer T> ? T : never } : never;

/** The ports the listed areas provide (lib/manifest/areas.ts, through core/area-list.ts): a module's ports join by being listed. */
export type AreaPorts = UnionToIntersection<ProvidedPorts<ListedArea>>;

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
  /**
   * Keep alias owners in memory (user.store.ts): only where this process makes every alias claim
   * and release (the local platform), so clearing its own cache keeps it true. @default false
   */
  readonly cacheAliases?: boolean;
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
  const users = createUserStore(db, { cacheAliases: adapters.cacheAliases === true });
  const tokens = createTokenStore(db);
  const credits = createCredits(db, clock, config.MONTHLY_FREE_CREDITS);
  const blobs = adapters.blobs;
  const kernel: KernelPorts = {
    config,
    clock,
    log,
    db,
    blobs,
    // Each record also adds to the analytics counters (issue 37), whose table usageLogs is granted.
    usageLogs: createUsageLogWriter(db, blobs, clock, config.USAGE_LOG_RETENTION_DAYS, createUsageCounters(db)),
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
    admission: createAdmission(),
  };
  const provided: Record<string, unknown> = {};
  for (const area of modules) for (const [name, provision] of Object.entries(area.provides)) provided[name] = provision.create(kernel);
  // Checked by `checkAreas` and by the AreaPorts type: the listed modules provide exactly these.
  return { ...kernel, ...provided } as Ports;
}

/** Members every area may use without declaring them: what the pipeline itself runs on, and utilities. */
const UNDECLARED_OK: ReadonlySet<string> = new Set(['config', 'clock', 'log', 'fetch', 'credentials', 'identity', 'runTokens', 'rateLimiter', 'admission']);

/** An area's code touched a port its module does not declare: a bug, which the cloud would show as AccessDenied. */
export class UndeclaredPortError extends Error {}

const views = new WeakMap<Ports, WeakMap<AreaModule, Ports>>();

/**
 * The platform as `area`'s handlers see it: declared ports and the kernel's, nothing else. Both
 * wirings hand this to handlers, so an undeclared use fails in every local test instead of as a
 * missing grant in the cloud, where a function is granted only its area's declared ports.
 */
export function portsForArea(ports: Ports, area: AreaModule): Ports {
  let byArea = views.get(ports);
  if (byArea === undefined) views.set(ports, (byArea = new WeakMap()));
  const existing = byArea.get(area);
  if (existing !== undefined) return existing;
  const allowed = new Set<string>([...UNDECLARED_OK, ...area.uses, ...Object.keys(area.provides)]);
  // Getters, not copies: a member replaced later (tests swap `fetch`) is seen through the view. The
  // undeclared ones are not enumerable, so `{ ...platform, log }` in a handler leaves them out
  // instead of touching them.
  const view = {} as Ports;
  for (const name of Object.keys(ports)) {
    const declared = allowed.has(name);
    Object.defineProperty(view, name, {
      enumerable: declared,
      get: declared
        ? // `tasks` is bound to the area: it reaches the area's own queues only.
          name === 'tasks'
          ? () => tasksForArea(ports.tasks, area)
          : () => ports[name as keyof Ports]
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
