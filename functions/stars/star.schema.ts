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
