import * as z from 'zod';
import { serverIdSchema } from '../mcp/mcp.schema.ts';

export const checkoutBody = z.object({
  tier: z.enum(['starter', 'professional'], { error: 'must be "starter" or "professional" (the paid tiers)' }),
});

export const resourceParams = z.object({ resourceId: serverIdSchema });
