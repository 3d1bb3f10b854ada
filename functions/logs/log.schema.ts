import * as z from 'zod';

/** SPEC part 8: timeRange defaults to 24 hours; it may reach back as far as records are kept by default (30 days). */
export const DEFAULT_TIME_RANGE_HOURS = 24;
export const MAX_TIME_RANGE_HOURS = 720;
/** SPEC part 8: pageSize defaults to 50. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/**
 * Offset paging over DynamoDB means reading every record before the page, so the offset is capped;
 * past it, a narrower timeRange or a filter finds the records faster than paging would.
 */
export const MAX_PAGE_OFFSET = 10_000;

export const LOG_STATUSES = ['success', 'error', 'timeout'] as const;
export type LogStatus = (typeof LOG_STATUSES)[number];

/** Request ids as the lineage header carries them (functions/core/http/lineage.ts). */
const requestIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'is not a request id');

/** A query-string integer: digits only, so `1.5`, `1e3` or `0x10` are refused rather than coerced. */
function wholeNumber(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d{1,7}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .default(fallback);
}

const filterValue = z.string().trim().min(1, 'must not be empty').max(256, 'must be at most 256 characters');

export const listLogsQuery = z
  .object({
    /** Hours back from now. */
    timeRange: wholeNumber(1, MAX_TIME_RANGE_HOURS, DEFAULT_TIME_RANGE_HOURS),
    pageSize: wholeNumber(1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
    /** Zero-based. */
    page: wholeNumber(0, MAX_PAGE_OFFSET, 0),
    status: z.enum(LOG_STATUSES, { error: `must be one of ${LOG_STATUSES.join(', ')}` }).optional(),
    resourceId: filterValue.optional(),
    parentConversationId: filterValue.optional(),
  })
  .superRefine((q, ctx) => {
    if (q.page * q.pageSize > MAX_PAGE_OFFSET) {
      ctx.addIssue({
        code: 'custom',
        path: ['page'],
        message: `page × pageSize must be at most ${MAX_PAGE_OFFSET}; narrow timeRange or filter by resourceId, status or parentConversationId instead`,
      });
    }
  });

export type ListLogsQuery = z.infer<typeof listLogsQuery>;

export const requestIdParams = z.object({ requestId: requestIdSchema });
export const traceIdParams = z.object({ traceId: requestIdSchema });

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const epochMs = z.number().describe('Milliseconds since the epoch');
const bodyPreview = z.object({ preview: z.string().describe('The first 200 characters of the body'), sizeBytes: z.number().int() });
const bodyInFull = z.object({
  body: z.unknown().describe('The body: parsed JSON when it was JSON, else its text'),
  sizeBytes: z.number().int(),
  truncated: z.boolean().describe('True only when the full body could not be read and `body` is the stored 8 KB preview (text)'),
});

/** The fields every view of a record shows (`summaryOf`), bodies apart. */
const logFields = {
  requestId: z.string(),
  rootRequestId: z.string().describe('The first request of the chain this one belongs to (the trace id)'),
  parentRequestId: z.string().nullable(),
  parentConversationId: z.string().nullable(),
  parentAgentId: z.string().nullable(),
  resourceId: z.string(),
  resourceType: z.enum(['agent', 'action', 'mcp', 'voice', 'code-server', 'cron', 'channel', 'knowledge', 'test']),
  requestType: z.string().nullable(),
  status: z.enum(LOG_STATUSES),
  createdAt: epochMs,
  metrics: z.object({ durationMs: z.number(), memoryMb: z.number().nullable(), maxMemoryUsedMb: z.number().nullable() }),
  creditsUsed: z.number(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
};

export const logSummaryResponse = z.object({ ...logFields, request: bodyPreview, response: bodyPreview });

export const logListResponse = z.object({
  logs: z.array(logSummaryResponse).describe('Newest first'),
  page: z.number().int(),
  pageSize: z.number().int(),
  count: z.number().int(),
  hasMore: z.boolean(),
  timeRange: z.number().int().describe('Hours, as applied'),
  scanLimitReached: z.boolean().describe("True when reading stopped at the platform's read budget before the page was complete; narrow the query"),
});

export const logDetailResponse = z.object({
  ...logFields,
  userId: z.string(),
  expiresAt: z.number().describe('Milliseconds since the epoch; the record is deleted after it'),
  request: bodyInFull,
  response: bodyInFull,
});

// A trace is a tree; the OpenAPI document takes no recursive schema, so a node's children are
// declared as "of the same shape" and typed one level deep.
const traceChildren = z.array(z.unknown()).describe('Nodes of the same shape as `root` (either kind), oldest first');
const traceNode = z.union([
  logSummaryResponse.extend({ children: traceChildren }),
  z
    .object({ requestId: z.string(), redacted: z.literal(true), children: traceChildren })
    .describe("A hop the caller may not see (another user's record, or one not recorded); shown only on the way to the caller's own records"),
]);

export const traceResponse = z.object({
  traceId: z.string().describe('The root request id of the chain'),
  root: traceNode,
  count: z.number().int().describe("The caller's own records in the tree"),
  scanLimitReached: z.boolean().describe('True when the trace had more records than are read; the tree shows the oldest ones'),
});
