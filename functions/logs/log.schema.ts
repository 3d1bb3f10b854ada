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
