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

// The response (the `data` of a success), as the handler answers it: the OpenAPI document's
// response schema and the typed client's type.

/** SPEC part 2, "Search result" (resource search), in SPEC 4.7's order. */
export const searchResultResponse = z.object({
  resourceId: z.string().describe('For an MCP tool, the id of its server'),
  resourceType: z.enum(['agent', 'mcp', 'mcp-tool', 'skill']),
  name: z.string().describe("The resource's name; for an MCP tool, the tool's"),
  description: z.string(),
  slug: z.string().describe('`{owner}/{name}`'),
  score: z.number().describe('Higher is a better match; comparable within one answer only'),
  owner: z.string().describe("The owner's alias"),
  visibility: z.literal('public').describe('Only public resources are searched'),
});

export const searchResponse = z.object({
  results: z.array(searchResultResponse).describe('Best first'),
  query: z.string(),
  type: z.enum(['all', 'agent', 'mcp', 'mcp-tool', 'skill']),
  count: z.number().int(),
  mode: z.enum(['hybrid', 'lexical']).describe('`hybrid` when meaning (embeddings) was searched besides words, else `lexical`'),
});
