import type { AgentRuns } from './agents/agent-runs.ts';
import type { Admission } from './core/admission.ts';
import type { CredentialLookup, IdentityVerifier } from './core/auth/credentials.ts';
import type { RunTokens } from './core/auth/run-token.ts';
import type { BlobStore } from './core/blobs.ts';
import type { Clock } from './core/clock.ts';
import type { Config } from './core/config.ts';
import type { Credits } from './core/credits.ts';
import type { Db } from './core/db/dynamo.ts';
import type { Logger } from './core/logger.ts';
import type { RateLimiter } from './core/rate-limit.ts';
import type { SecretBox } from './core/secret-box.ts';
import type { SecretReader } from './core/secret-reader.ts';
import type { Tasks } from './core/tasks/tasks.ts';
import type { Schedules } from './core/tasks/schedules.ts';
import type { UsageLogWriter } from './core/usage-log.ts';
import type { Compute } from './runtimes/compute.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import type { TokenStore } from './tokens/token.store.ts';
import type { UserStore } from './users/user.store.ts';

// Apart from ports.ts, which builds ports from area modules (lib/manifest/types.ts): the area
// module's `provides` names these ports, so types.ts imports them from here, without a cycle.

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
  /** Per-caller concurrency, checked by the pipeline before a request may queue for anything shared. */
  readonly admission: Admission;
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
