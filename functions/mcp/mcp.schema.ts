import * as z from 'zod';

/** Largest MCP server source accepted (the spec leaves it open); the runtime receives it whole. */
export const MAX_SOURCE_BYTES = 512 * 1024;
/**
 * Version sources up to this size are kept in the version item; larger ones go to the blob store
 * (content-addressed, so a rollback copy of a large source reuses the same object).
 */
export const INLINE_SOURCE_BYTES = 64 * 1024;
export const MAX_SERVERS_PER_OWNER = 500;
/** Credits a `tools/call` costs (SPEC part 1: invocations consume credits; the amount is ours). */
export const TOOL_CALL_CREDITS = 1;
/** SPEC part 2: the author's monthly subscription price is at least 0.50 USD. */
export const MIN_SUBSCRIPTION_PRICE_USD = 0.5;

export const serverNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lowercase letters and digits separated by single hyphens');

export const serverIdSchema = z.string().regex(/^mcp-[A-Za-z0-9]{1,64}$/, 'must be an MCP server id ("mcp-" followed by letters and digits)');

const sourceCodeSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_SOURCE_BYTES, `must be at most ${MAX_SOURCE_BYTES} bytes`);

const descriptionSchema = z.string().trim().min(1, 'must not be empty').max(2000);
const visibilitySchema = z.enum(['private', 'public']);
/** `hidden` hides the source from everyone but the owner (SPEC part 2); `visible` is the default. */
const sourceVisibilitySchema = z.enum(['visible', 'hidden']);
const changeNoteSchema = z.string().trim().max(1000);

export const authorPricingSchema = z.object({
  subscriptionPriceUsdMonthly: z
    .number({ error: 'must be a number (USD per month)' })
    .min(MIN_SUBSCRIPTION_PRICE_USD, `must be at least ${MIN_SUBSCRIPTION_PRICE_USD.toFixed(2)} USD`)
    .max(10_000, 'must be at most 10000 USD')
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, 'must be a whole number of cents'),
  freeTrialQuota: z.number().int('must be a whole number of invocations').min(0).max(1_000_000).default(0),
  /**
   * The author's fee per `tools/call`, in credits, paid by callers past the trial who do not
   * subscribe (without it they are refused with 402); subscribers and trial calls skip it.
   */
  perCallCredits: z.number({ error: 'must be a number of credits' }).min(0.0001).max(100_000).optional(),
});
export type AuthorPricing = z.infer<typeof authorPricingSchema>;

export const createServerBody = z.object({
  serverName: serverNameSchema,
  description: descriptionSchema,
  sourceCode: sourceCodeSchema,
  visibility: visibilitySchema.default('private'),
  sourceVisibility: sourceVisibilitySchema.default('visible'),
  authorPricing: authorPricingSchema.nullable().optional(),
  changeNote: changeNoteSchema.optional(),
});

export const updateServerBody = z.object({
  serverId: serverIdSchema,
  description: descriptionSchema.optional(),
  sourceCode: sourceCodeSchema.optional(),
  changeNote: changeNoteSchema.optional(),
  visibility: visibilitySchema.optional(),
  sourceVisibility: sourceVisibilitySchema.optional(),
  /** `null` removes the pricing. */
  authorPricing: authorPricingSchema.nullable().optional(),
});

export const serverIdBody = z.object({ serverId: serverIdSchema });
export const serverIdParams = z.object({ serverId: serverIdSchema });
export const slugParams = z.object({ owner: z.string().min(1).max(64), slug: serverNameSchema });

const versionNumberSchema = z.coerce
  .number({ error: 'must be a version number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);

export const versionParams = z.object({ serverId: serverIdSchema, version: versionNumberSchema });

export const rollbackBody = z.object({
  targetVersion: z.number({ error: 'must be a version number' }).int('must be a whole number').min(1, 'must be at least 1'),
  changeNote: changeNoteSchema.optional(),
});

export const listServersQuery = z.object({
  visibility: z.enum(['all', 'public', 'private']).default('all'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  /** A `nextCursor` of an earlier page (a platform extra to SPEC 4.4's limit). */
  cursor: z.string().max(2048).optional(),
});

export const versionsQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

/**
 * Query of the MCP endpoint: `v=N` or `version=N` pins a snapshot (SPEC part 9). Other parameters
 * (the legacy `userId`/`secretServiceKey` credentials) are read by the auth step, not here.
 */
export const mcpQuery = z
  .object({ v: versionNumberSchema.optional(), version: versionNumberSchema.optional() })
  .refine((q) => q.v === undefined || q.version === undefined || q.v === q.version, { message: 'v and version name different versions', path: ['version'] })
  .transform((q) => ({ version: q.version ?? q.v }));

export const mcpSlugParams = slugParams;

/** A stored MCP server: the live version is `latestVersion` (always the highest version written). */
export interface McpServerRecord {
  readonly serverId: string;
  readonly ownerId: string;
  readonly serverName: string;
  readonly description: string;
  readonly visibility: 'private' | 'public';
  readonly sourceVisibility: 'visible' | 'hidden';
  readonly authorPricing: AuthorPricing | null;
  readonly latestVersion: number;
  /** Tool names of the live version. */
  readonly tools: readonly string[];
  /** SHA-256 (hex) and size of the live version's source, so an update can tell a real change. */
  readonly sourceSha256: string;
  readonly sourceSizeBytes: number;
  /** Present only on public servers: the sparse `publicServers` index lists them without a Scan. */
  readonly publicListing?: 'public';
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** SPEC part 2, "MCP version snapshot", as stored: the source inline or in the blob store. */
export interface McpVersionRecord {
  readonly serverId: string;
  readonly version: number;
  readonly createdAt: number;
  readonly createdBy: string;
  readonly sizeBytes: number;
  readonly changeNote: string;
  readonly rollbackOf: number | null;
  readonly tools: readonly string[];
  readonly sourceSha256: string;
  /** Inline source (at most INLINE_SOURCE_BYTES), or null when it is in the blob store under `sourceBlobKey`. */
  readonly sourceCode: string | null;
  readonly sourceBlobKey: string | null;
}

/** A version with its source, whichever way it was stored. */
export type McpVersion = Omit<McpVersionRecord, 'sourceCode' | 'sourceBlobKey'> & { readonly sourceCode: string };

/** A version without its source (listings). */
export type McpVersionSummary = Omit<McpVersionRecord, 'sourceCode' | 'sourceBlobKey' | 'serverId' | 'sourceSha256'>;

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** SPEC part 2, "MCP server", as `presentServer` shows it; `sourceCode` (the live version's) only on a single read the caller may see. */
export const serverResponse = z.object({
  serverId: z.string(),
  serverName: z.string(),
  description: z.string(),
  owner: z.string().nullable().describe("The owner's alias (null before the owner chose one)"),
  slug: z.string().nullable().describe('`{owner}/{serverName}`; null while the owner has no alias'),
  visibility: visibilitySchema,
  sourceVisibility: sourceVisibilitySchema.describe('`hidden`: only the owner reads `sourceCode`'),
  latestVersion: z.number().int().describe('The live version'),
  tools: z.array(z.string()).readonly().describe('Tool names of the live version'),
  sizeBytes: z.number().int().describe("Size of the live version's source"),
  authorPricing: z
    .object({ subscriptionPriceUsdMonthly: z.number(), freeTrialQuota: z.number().int(), perCallCredits: z.number().optional() })
    .nullable()
    .describe('Paid servers only; null for free ones'),
  endpointUrl: z.string().describe('The MCP endpoint by id'),
  slugEndpointUrl: z.string().nullable().describe('The MCP endpoint by `{owner}/{serverName}`; null while the owner has no alias'),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  updatedAt: z.number().describe('Milliseconds since the epoch'),
  sourceCode: z.string().optional(),
});

/** Create answers the server and its first version. */
export const serverCreatedResponse = serverResponse.extend({ version: z.number().int().describe('Always 1') });

/** Update answers the server and the version its `sourceCode` wrote (null when no source was given). */
export const serverUpdatedResponse = serverResponse.extend({
  version: z.number().int().nullable().describe('The version this update wrote; null when it changed fields only'),
});

export const serverListResponse = z.object({
  servers: z.array(serverResponse),
  count: z.number().int(),
  limit: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const serverDeletedResponse = z.object({
  serverId: z.string(),
  serverName: z.string(),
  deleted: z.boolean().describe('Always true'),
  message: z.string(),
});

/** SPEC part 2, "MCP version snapshot", without its source. */
export const versionSummaryResponse = z.object({
  version: z.number().int(),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  createdBy: z.string().describe('User id of who wrote it'),
  sizeBytes: z.number().int(),
  changeNote: z.string(),
  rollbackOf: z.number().int().nullable().describe('The version this one copies, when written by a rollback'),
  tools: z.array(z.string()).readonly(),
});

export const versionListResponse = z.object({
  serverId: z.string(),
  latestVersion: z.number().int(),
  versions: z.array(versionSummaryResponse).describe('Newest first'),
  count: z.number().int(),
});

export const versionResponse = versionSummaryResponse.extend({
  serverId: z.string(),
  sourceCode: z.string().optional().describe('Omitted for non-owners when the source is hidden'),
});

export const rollbackResponse = z.object({
  serverId: z.string(),
  rolledBackTo: z.number().int(),
  version: z.number().int().describe("The new version written with the target's source"),
  latestVersion: z.number().int(),
  tools: z.array(z.string()).readonly(),
});
