import * as z from 'zod';

/** How far back the figures reach (the counters are kept a little longer: COUNTER_RETENTION_DAYS). */
export const MAX_DAYS = 365;
export const DEFAULT_DAYS = 30;
/** Points one timeseries answers at most: 31 days by the hour, a year and a day by the day. */
export const MAX_POINTS = { hour: 744, day: 366 } as const;
export const MAX_RESOURCES = 100;
export const DEFAULT_RESOURCES = 20;

export const METRICS = ['requests', 'errors', 'credits', 'durationMs'] as const;
export type Metric = (typeof METRICS)[number];
export const INTERVALS = ['hour', 'day'] as const;
export type Interval = (typeof INTERVALS)[number];

/** A query-string integer: digits only, so `1.5`, `1e3` or `0x10` are refused rather than coerced. */
function wholeNumber(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d{1,7}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .default(fallback);
}

/** A time as ISO 8601 (`2026-11-28` or `2026-11-28T19:00:00Z`) or epoch milliseconds; UTC unless it says otherwise. */
const time = z
  .string()
  .max(64, 'must be at most 64 characters')
  .transform((text, ctx) => {
    const ms = /^\d{1,15}$/.test(text) ? Number(text) : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 time (2026-11-28T19:00:00Z) or epoch milliseconds' });
      return z.NEVER;
    }
    return ms;
  });

export const overviewQuery = z.object({ days: wholeNumber(1, MAX_DAYS, DEFAULT_DAYS) });
export type OverviewQuery = z.infer<typeof overviewQuery>;

export const resourcesQuery = z.object({
  days: wholeNumber(1, MAX_DAYS, DEFAULT_DAYS),
  limit: wholeNumber(1, MAX_RESOURCES, DEFAULT_RESOURCES),
});
export type ResourcesQuery = z.infer<typeof resourcesQuery>;

export const timeseriesQuery = z.object({
  metric: z.enum(METRICS, { error: `must be one of ${METRICS.join(', ')}` }).default('requests'),
  interval: z.enum(INTERVALS, { error: `must be one of ${INTERVALS.join(', ')}` }).default('day'),
  from: time.optional(),
  to: time.optional(),
});
export type TimeseriesQuery = z.infer<typeof timeseriesQuery>;

/** Figures of a set of runs. */
export interface Figures {
  readonly requests: number;
  readonly errors: number;
  readonly creditsSpent: number;
}

/** One resource's row in GET /analytics/resources. */
export interface ResourceFigures extends Figures {
  readonly resourceId: string;
  readonly resourceType: string;
  /** Its name when the caller owns it or it is public; null otherwise (or when it is gone). */
  readonly name: string | null;
  /** Of the caller's own runs; null without any. Within about 9 % (functions/core/usage-counters.ts, BUCKETS_PER_DOUBLING). */
  readonly p50DurationMs: number | null;
  readonly p95DurationMs: number | null;
  /** For the caller's public resources: calls others made (counts only); null for anything else. */
  readonly byOthers: { readonly requests: number; readonly errors: number } | null;
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const iso = z.string().describe('ISO 8601');
const figureFields = {
  requests: z.number().int(),
  errors: z.number().int(),
  creditsSpent: z.number(),
};
const resourceType = z.string().describe('`agent`, `action`, `mcp`, `voice`, `cron`, `channel`, ...');

export const overviewResponse = z.object({
  days: z.number().int(),
  from: iso,
  to: iso,
  ...figureFields,
  errorRate: z.number().describe('errors / requests, 0 without requests'),
  avgDurationMs: z.number().int(),
  byType: z.record(z.string(), z.object(figureFields)).describe('By resource type; every shown type is present, with zeros when unused'),
  topResources: z
    .array(z.object({ resourceId: z.string(), resourceType, name: z.string().nullable(), ...figureFields }))
    .describe("The caller's busiest resources, most requests first"),
  publicUsage: z.object({ requests: z.number().int(), errors: z.number().int() }).describe("What the caller's public resources served to others: counts only"),
});

export const resourcesResponse = z.object({
  days: z.number().int(),
  from: iso,
  to: iso,
  resources: z
    .array(
      z.object({
        resourceId: z.string(),
        resourceType,
        name: z.string().nullable().describe('Null when the resource no longer exists'),
        ...figureFields,
        p50DurationMs: z.number().nullable(),
        p95DurationMs: z.number().nullable(),
        byOthers: z
          .object({ requests: z.number().int(), errors: z.number().int() })
          .nullable()
          .describe('Calls by other users of a public resource (counts only); null when none'),
      }),
    )
    .describe('Most requests (own and by others) first'),
});

export const timeseriesResponse = z.object({
  metric: z.enum(METRICS),
  interval: z.enum(INTERVALS),
  from: iso,
  to: iso,
  points: z
    .array(z.object({ t: iso.describe('The start of the hour or day (UTC)'), value: z.number() }))
    .describe('One per interval, oldest first, zeros included'),
});
