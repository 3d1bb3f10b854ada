import type { AreaModule } from '../lib/manifest/types.ts';
import type { CredentialLookup, IdentityVerifier } from './core/auth/credentials.ts';
import type { RunTokens } from './core/auth/run-token.ts';
import { createBlobStore, createS3Client, type BlobStore } from './core/blobs.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { Config } from './core/config.ts';
import { createCredits, type Credits } from './core/credits.ts';
import { createDb, type Db } from './core/db/dynamo.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { createRateLimiter, type RateLimiter } from './core/rate-limit.ts';
import type { KeysReader } from './core/keys-reader.ts';
import type { SecretBox } from './core/secret-box.ts';
import type { SecretReader } from './core/secret-reader.ts';
import { createUsageLogWriter, type UsageLogWriter } from './core/usage-log.ts';
import { createPlatformTasks, tasksForArea, type TaskQueue, type Tasks } from './core/tasks/tasks.ts';
import { createKeyStore, type KeyStore } from './keys/key.store.ts';
import { createKeysReader } from './keys/key.service.ts';
import { createAgentStore, type AgentStore } from './agents/agent.store.ts';
import { createConversationStore, type ConversationStore } from './agents/conversation.store.ts';
import { createActionStore, type ActionStore } from './actions/action.store.ts';
import type { Compute } from './runtimes/compute.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import { createMcpServerStore, type McpServerStore } from './mcp/mcp.store.ts';
import { createLogStore, type LogStore } from './logs/log.store.ts';
import { createOAuthStateStore, type OAuthStateStore } from './oauth/oauth.store.ts';
import { createTokenStore, type TokenStore } from './tokens/token.store.ts';
import { createCredentialLookup } from './users/credential-lookup.ts';
import { createUserStore, type UserStore } from './users/user.store.ts';

/**
 * Everything a handler may reach: configuration, the clock, the logger and the ports. Built once
 * per process by a composition root (`functions/cloud.ts` for Lambda, `lib/local` for `npm start`);
 * nothing else chooses adapters.
 */
export interface Ports {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly db: Db;
  readonly blobs: BlobStore;
  readonly usageLogs: UsageLogWriter;
  /** Reads usage records for the logs endpoints. */
  readonly logs: LogStore;
  /** Pending OAuth authorizations, by single-use state. */
  readonly oauthStates: OAuthStateStore;
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
  readonly keys: KeyStore;
  readonly secretBox: SecretBox;
  /**
   * Operator secrets kept in a secret store and named by ARN in the configuration (OAuth client
   * secrets): Secrets Manager in the cloud; null locally, where the configuration holds the values.
   */
  readonly secrets: SecretReader | null;
  readonly keysReader: KeysReader;
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly actions: ActionStore;
  /** Runs user code: local runtime processes, or the runtime Lambda in the cloud. */
  readonly compute: Compute;
  /** MCP servers, their names and their append-only versions. */
  readonly mcpServers: McpServerStore;
  /** Runs user MCP servers: one Node process per tenant locally, the MCP runtime Lambda in the cloud. */
  readonly mcpRuntime: McpRuntime;
  /** Hands work to the area's own queue entry points; usable only through an area's view (`portsForArea`). */
  readonly tasks: Tasks;
}

/** Adapters that differ between the cloud and the local wiring. */
export interface PortAdapters {
  readonly identity: IdentityVerifier | null;
  readonly runTokens: RunTokens;
  readonly secretBox: SecretBox;
  readonly compute: Compute;
  readonly mcpRuntime: McpRuntime;
  /** Keeps tasks until their queue entry point runs them: SQS in the cloud, the local persistent queue. */
  readonly taskQueue: TaskQueue;
  /** @default null: no secret store (the local platform) */
  readonly secrets?: SecretReader | null;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export function createPorts(config: Config, adapters: PortAdapters): Ports {
  const clock = adapters.clock ?? systemClock;
  const log = adapters.log ?? createLogger(config.LOG_LEVEL, { stage: config.STAGE });
  const db = createDb(config);
  const users = createUserStore(db);
  const tokens = createTokenStore(db);
  const credits = createCredits(db, clock, config.MONTHLY_FREE_CREDITS);
  const blobs = createBlobStore(createS3Client(config), config, 'blobs');
  const keys = createKeyStore(db);
  return {
    config,
    clock,
    log,
    db,
    blobs,
    usageLogs: createUsageLogWriter(db, blobs, clock, config.USAGE_LOG_RETENTION_DAYS),
    logs: createLogStore(db),
    oauthStates: createOAuthStateStore(db),
    // Through a wrapper so `this` is never the platform object.
    fetch: (input, init) => globalThis.fetch(input, init),
    users,
    tokens,
    credits,
    keys,
    secretBox: adapters.secretBox,
    secrets: adapters.secrets ?? null,
    keysReader: createKeysReader({ keys, secretBox: adapters.secretBox }),
    agents: createAgentStore(db),
    conversations: createConversationStore(db, blobs),
    actions: createActionStore(db),
    compute: adapters.compute,
    mcpServers: createMcpServerStore(db, blobs, clock),
    mcpRuntime: adapters.mcpRuntime,
    tasks: createPlatformTasks(adapters.taskQueue),
    identity: adapters.identity,
    runTokens: adapters.runTokens,
    credentials: createCredentialLookup({ users, tokens, credits, clock }),
    rateLimiter: createRateLimiter(db, clock),
  };
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
  const allowed = new Set<string>([...UNDECLARED_OK, ...area.uses]);
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
  byArea.set(area, view);
  return view;
}
