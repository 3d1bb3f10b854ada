import * as z from 'zod';

export const resourceTypeSchema = z.enum(['agent', 'mcp', 'skill']);
export type StarResourceType = z.infer<typeof resourceTypeSchema>;

/** Agent and skill ids are UUIDs, MCP server ids `mcp-` and base62: one shape that admits all three. */
export const resourceIdSchema = z.string().regex(/^[A-Za-z0-9-]{1,80}$/, 'must be a resource id (an agent, MCP server or skill id)');

export const starBody = z.object({ resourceId: resourceIdSchema, resourceType: resourceTypeSchema });
export const checkQuery = z.object({ resourceId: resourceIdSchema });
export const countParams = z.object({ resourceId: resourceIdSchema });
export const listStarsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

/** One user's star on one resource: keyed by resource, then user, so a resource's stars are one partition. */
export interface StarRecord {
  readonly resourceId: string;
  readonly userId: string;
  readonly resourceType: StarResourceType;
  readonly starredAt: number;
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const starCount = z.number().int().describe('Stars the resource has now, from every user');

export const starredResponse = z.object({
  resourceId: z.string(),
  resourceType: resourceTypeSchema,
  starred: z.literal(true),
  added: z.boolean().describe('False when the caller had starred it already'),
  count: starCount,
});

export const unstarredResponse = z.object({
  resourceId: z.string(),
  resourceType: resourceTypeSchema,
  starred: z.literal(false),
  removed: z.boolean().describe('False when the caller had not starred it'),
  count: starCount,
});

export const starListResponse = z.object({
  stars: z
    .array(
      z.object({
        resourceId: z.string(),
        resourceType: resourceTypeSchema,
        name: z.string(),
        description: z.string(),
        owner: z.string().nullable().describe("The owner's alias"),
        slug: z.string().nullable().describe('`{owner}/{name}`; null while the owner has no alias'),
        starredAt: z.number().describe('Milliseconds since the epoch'),
      }),
    )
    .describe('Newest first; resources since deleted or made private are left out, so a page may be short'),
  count: z.number().int(),
  nextCursor: z.string().nullable(),
});

export const starCheckResponse = z.object({ resourceId: z.string(), starred: z.boolean() });
export const starCountResponse = z.object({ resourceId: z.string(), count: starCount });
