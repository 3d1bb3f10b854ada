import * as z from 'zod';

/** The most results one `GET /search` returns (SPEC 4.7). */
export const MAX_SEARCH_LIMIT = 50;

/** `GET /search?q=&type=&limit=` (SPEC 4.7). */
export const searchResourcesQuery = z.object({
  q: z.string({ error: 'is required: the words to search for' }).trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'),
  type: z.enum(['all', 'agent', 'mcp', 'mcp-tool', 'skill'], { error: 'must be one of all, agent, mcp, mcp-tool, skill' }).default('all'),
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_SEARCH_LIMIT, `must be at most ${MAX_SEARCH_LIMIT}`)
    .default(10),
});
