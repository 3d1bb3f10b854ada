/**
 * The manifest's data: routes, entry points, tables, buckets, what ports reach. Apart from
 * types.ts (the area module), which names the kernel's ports: the kernel reads these (a route's
 * callers, a queue's spec), so they must not lead back to it (test/unit/import-cycles.test.ts).
 */

/** Host a route is served on. Locally each non-base host is a path prefix on the one port. */
export type Host = 'base' | 'stream' | 'mcp' | 'voice' | 'cdn' | 'site' | 'code';

/**
 * How a route authenticates its caller.
 * - `required`: a user credential must resolve to an active account.
 * - `optional`: anonymous callers are allowed; a credential that is present must be valid.
 * - `public`: credentials are not read at all.
 * - `admin`: like `required`, and the account must be an operator.
 */
export type AuthMode = 'required' | 'optional' | 'public' | 'admin';

/**
 * Which authenticated callers a route admits, by the scope of their credential. Anonymous callers
 * are governed by the route's `AuthMode` alone.
 * - `full`: only full-scope user credentials (user tokens, secret keys, identity-provider sessions).
 *   Role tokens and run tokens carry the `role` scope and get 403: they are handed to CI jobs and
 *   to agents' code, so they must not be able to create, change or delete what the account owns.
 * - `role`: full-scope and role-scope credentials alike; for routes that only run or read.
 * - `agent`: also agent-scoped run tokens (embed visitors, phone calls), which every other route
 *   refuses; for the chat routes, whose services check the agent against the token's list.
 */
export type CallerScope = 'full' | 'role' | 'agent';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Response envelope family (SPEC part 1 and 7): B is the default, A for agents and actions. */
export type EnvelopeStyle = 'A' | 'B' | 'website';

/** One HTTP route of the platform, as data. */
export interface RouteSpec {
  /** `area.handler`: routes served by one handler module (POST and PUT /user/alias) share it. */
  readonly id: string;
  readonly method: HttpMethod;
  /**
   * Path template with `{param}` segments, relative to the host; a last `{name+}` segment takes the
   * rest of the path (one segment or more, still URL-encoded).
   */
  readonly path: string;
  readonly host: Host;
  /** Area name (its folder under `functions/` unless `folder` says otherwise); one cloud function per area. */
  readonly area: string;
  /** The area's folder relative to the repository root, when it is not `functions/<area>`. */
  readonly folder?: string;
  /** Handler module name: `functions/<area>/handlers/<handler>.handler.ts`. */
  readonly handler: string;
  readonly auth: AuthMode;
  /** Whether role and run tokens may call the route (`role`) or only full-scope credentials (`full`). */
  readonly callers: CallerScope;
  /** `buffered` responses go through API Gateway; `streaming` ones through a response-stream function URL. */
  readonly mode: 'buffered' | 'streaming';
  readonly style: EnvelopeStyle;
  /** Seconds before the platform gives up on the handler. */
  readonly timeoutSec: number;
  /** Largest accepted request body; larger ones get 413 before they are read. */
  readonly maxBodyBytes: number;
  /**
   * `json-rpc`: the route speaks JSON-RPC (the MCP endpoint), so the platform's own refusals (auth,
   * credits, limits, unknown server, bad JSON) are JSON-RPC error objects a protocol client can read,
   * not the route style's envelope. See functions/core/http/json-rpc-error.ts.
   */
  readonly errors?: 'json-rpc';
  /** Fixed-window limit per caller (user id, or source IP when anonymous); 429 with Retry-After past it. */
  readonly rateLimit?: {
    readonly limit: number;
    readonly windowSec: number;
    /** Routes naming the same bucket share one counter per caller (e.g. the three chat variants). */
    readonly bucket?: string;
    /** A lower limit for anonymous callers (counted per source IP), where their calls cost someone else. */
    readonly anonymousLimit?: number;
  };
}

export interface TableIndex {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
}

/** One DynamoDB table per resource kind. Every key attribute is a string unless listed in `numberKeys`. */
export interface TableSpec {
  /** Logical name; the physical name is `<tablePrefix><name>`. At least 3 characters (dynalite). */
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly numberKeys?: readonly string[];
  readonly indexes?: readonly TableIndex[];
  /** Epoch-seconds attribute DynamoDB expires items by; readers filter on it too. */
  readonly ttlAttribute?: string;
}

export interface BucketSpec {
  /** Logical name; the physical name is `<bucketPrefix><name>`. */
  readonly name: string;
  readonly purpose: string;
  /**
   * Browsers send files to its presigned upload URLs (the console's uploads): its CORS rules let any
   * origin PUT, POST and GET with a presigned URL (the URL is the permission; no cookies are sent).
   */
  readonly browserUploads?: boolean;
}

/** What a port reaches in the cloud, so a function is granted exactly what its area's ports need. */
export interface PortResources {
  /** Tables by logical name (those of some area module). */
  readonly tables?: readonly string[];
  /** Buckets by logical name (those of some area module). */
  readonly buckets?: readonly string[];
  /** The key that seals users' third-party keys: `open` decrypts only, `seal` also makes data keys. */
  readonly secretsKey?: 'open' | 'seal';
  /** The OAuth providers' client secrets (and their settings). */
  readonly oauthClients?: true;
  /** The runtime functions user code runs in. */
  readonly runtime?: 'python' | 'mcp';
  /** Sending to the declaring area's own queue entry points (never another area's). */
  readonly queues?: 'own';
  /** Invoking the embedding model of the search engine (Amazon Bedrock). */
  readonly embeddings?: true;
  /** Managing run-time schedules (EventBridge Scheduler) in the stack's group, which send to the area's own queues. */
  readonly schedules?: true;
  /** The secret keying run tokens, to mint them where no authenticated route brings it. */
  readonly runTokenSecret?: true;
  /** Invalidating the site host's CDN cache (CloudFront CreateInvalidation on the site distribution). */
  readonly siteCache?: true;
  /** Running owners' agents on the platform's behalf (invoking the agents function: functions/agents/agent-runs.ts). */
  readonly agentRuns?: true;
  /** Launching and driving code server instances (EC2, and SSM commands and setup parameters: functions/code-server/machines.ts). */
  readonly machines?: true;
}

/** Runs on a timetable: EventBridge Scheduler in the cloud, the in-process scheduler locally. */
export interface ScheduleSpec {
  readonly kind: 'schedule';
  /** `area.handler`, like a route's. */
  readonly id: string;
  readonly area: string;
  /** As on a route: the area's folder when it is not `functions/<area>`. */
  readonly folder?: string;
  /** Handler module: `functions/<area>/handlers/<handler>.schedule.ts`. */
  readonly handler: string;
  /** `rate(5 minutes)` or `cron(0 3 * * ? *)`, in EventBridge Scheduler's syntax (UTC). */
  readonly expression: string;
  readonly timeoutSec: number;
}

/** Consumes tasks handed off with the `tasks` port: an SQS queue in the cloud, an in-process queue locally. */
export interface QueueSpec {
  readonly kind: 'queue';
  readonly id: string;
  readonly area: string;
  /** As on a route: the area's folder when it is not `functions/<area>`. */
  readonly folder?: string;
  /** Handler module: `functions/<area>/handlers/<handler>.queue.ts`. */
  readonly handler: string;
  readonly timeoutSec: number;
  /** Deliveries of one task before it is set aside (the cloud's dead-letter queue). */
  readonly maxAttempts: number;
}

/** Reacts to objects written under a prefix of a bucket: S3 notifications in the cloud, the blob store's own events locally. */
export interface StorageEventSpec {
  readonly kind: 'storageEvent';
  readonly id: string;
  readonly area: string;
  /** As on a route: the area's folder when it is not `functions/<area>`. */
  readonly folder?: string;
  /** Handler module: `functions/<area>/handlers/<handler>.storage.ts`. */
  readonly handler: string;
  /** Logical name of a bucket some area module declares. */
  readonly bucket: string;
  /** Key prefix (with its trailing slash); prefixes of one bucket's storage events must not overlap (S3 refuses that). */
  readonly prefix: string;
  readonly timeoutSec: number;
}

/**
 * A long-running HTTP and WebSocket server serving one host whole (the voice bridge): Fargate
 * behind a load balancer and CloudFront in the cloud, in-process locally. The host has no routes.
 */
export interface ServiceSpec {
  readonly kind: 'service';
  readonly id: string;
  readonly area: string;
  /** As on a route: the area's folder when it is not `functions/<area>`. */
  readonly folder?: string;
  /** Handler module: `functions/<area>/handlers/<handler>.server.ts`. */
  readonly handler: string;
  /** The host it serves: every request and WebSocket upgrade under it, with host-relative paths. */
  readonly host: Host;
  /** Memory of each cloud task in MB; with `cpu`, one of Fargate's sizes. */
  readonly memoryMb: number;
  /** CPU of each cloud task in Fargate units (1024 = one vCPU). */
  readonly cpu: number;
  /** Cloud tasks running at once (the least, when `scaling` is set). */
  readonly desiredCount: number;
  /**
   * Scale the tasks on the load balancer's active connections (target tracking: connections per
   * healthy task). @default a fixed `desiredCount`
   */
  readonly scaling?: { readonly maxCount: number; readonly connectionsPerTask: number };
  /**
   * Tasks reach each other on the container port (their security group admits itself), for a
   * service that passes connections between its tasks (the voice bridge's connect-backs). @default false
   */
  readonly peers?: boolean;
}

/** Every way into an area's code other than an HTTP route. */
export type EntryPointSpec = ScheduleSpec | QueueSpec | StorageEventSpec | ServiceSpec;

/**
 * A browser script an area publishes (the embed widget on the CDN host): bundled and minified by
 * esbuild from `entry`, served at `/{name}` (the current version, revalidated) and
 * `/v{version}/{name}` (immutable). Locally the platform builds and serves it; in the cloud it is
 * an object in a bucket behind CloudFront (lib/cloud/asset-distribution.ts).
 */
export interface StaticAssetSpec {
  readonly host: Host;
  /** Repository-relative source file. */
  readonly entry: string;
  readonly name: string;
  readonly version: string;
}
