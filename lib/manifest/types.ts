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
 */
export type CallerScope = 'full' | 'role';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Response envelope family (SPEC part 1 and 7): B is the default, A for agents and actions. */
export type EnvelopeStyle = 'A' | 'B' | 'website';

/** One HTTP route of the platform, as data. */
export interface RouteSpec {
  /** `area.handler`: routes served by one handler module (POST and PUT /user/alias) share it. */
  readonly id: string;
  readonly method: HttpMethod;
  /** Path template with `{param}` segments, relative to the host. */
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
}

/**
 * A port of the platform (a member of `Ports`, functions/ports.ts) an area's code may use.
 * Each maps to the cloud resources behind it in `PORT_RESOURCES` (ports.ts).
 */
export type PortName =
  | 'users'
  | 'tokens'
  | 'credits'
  | 'keys'
  | 'keysReader'
  | 'secretBox'
  | 'secrets'
  | 'agents'
  | 'conversations'
  | 'actions'
  | 'compute'
  | 'mcpServers'
  | 'mcpRuntime'
  | 'logs'
  | 'usageLogs'
  | 'oauthStates'
  | 'blobs'
  | 'tasks';

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

/** A long-running process (the voice bridge): Fargate in the cloud, in-process locally. */
export interface ServiceSpec {
  readonly kind: 'service';
  readonly id: string;
  readonly area: string;
  /** Handler module: `functions/<area>/handlers/<handler>.service.ts`. */
  readonly handler: string;
  readonly memoryMb: number;
}

/** Every way into an area's code other than an HTTP route. */
export type EntryPointSpec = ScheduleSpec | QueueSpec | StorageEventSpec | ServiceSpec;

/**
 * One area of the platform, as data: everything the wirings need to serve it. The local platform,
 * the CDK stack and the generated Lambda entries are derived from the list of these (areas.ts); a
 * function gets grants and configuration for its own area's declarations only.
 */
export interface AreaModule {
  /** Its folder under `functions/`, and the prefix of its route and entry-point ids. */
  readonly name: string;
  /** The folder relative to the repository root, when it is not `functions/<name>` (sample areas in tests). */
  readonly folder?: string;
  readonly routes: readonly RouteSpec[];
  readonly entryPoints: readonly EntryPointSpec[];
  /** Tables this area owns (creates); other areas reach them only through this area's ports. */
  readonly tables: readonly TableSpec[];
  readonly buckets: readonly BucketSpec[];
  /**
   * Ports the area's handlers and services use beyond the kernel's (authentication, rate limits,
   * config, clock, log). Locally an undeclared port throws when touched; in the cloud its resources
   * are simply not granted.
   */
  readonly uses: readonly PortName[];
}
