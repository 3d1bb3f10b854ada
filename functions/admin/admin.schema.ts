import * as z from 'zod';
import { TIERS } from '../core/plans.ts';
import { aliasSchema } from '../users/user.schema.ts';

export const createUserBody = z.object({
  alias: aliasSchema.optional(),
  email: z.email().max(254).optional(),
  credits: z.number().min(0).max(1_000_000_000).optional(),
  isAdmin: z.boolean().optional(),
});

export const listUsersQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().optional(),
});

export const userIdParams = z.object({ userId: z.string().min(1).max(128) });

export const grantCreditsBody = z.object({
  amount: z
    .number()
    .min(-1_000_000_000)
    .max(1_000_000_000)
    .refine((n) => n !== 0, 'must not be zero'),
  reason: z.string().trim().min(1).max(200),
});

export const setTierBody = z.object({
  tier: z.enum(TIERS, { error: `must be one of ${TIERS.join(', ')}` }),
});
