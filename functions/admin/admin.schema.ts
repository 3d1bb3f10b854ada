import * as z from 'zod';
import { TIERS } from '../core/plans.ts';
import { planLimitsResponse } from '../billing/billing.schema.ts';
import { aliasSchema, userResponse } from '../users/user.schema.ts';

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

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** The account a new user gets: its first token and its legacy secret key are shown only here. */
export const userCreatedResponse = z.object({
  userId: z.string(),
  alias: z.string().nullable(),
  token: z.string().describe('A Bearer token of the new account; shown only in this answer'),
  tokenId: z.string(),
  secretKey: z.string().describe('The legacy secret key of the new account; shown only in this answer'),
});

export const userListResponse = z.object({ users: z.array(userResponse), count: z.number().int(), nextCursor: z.string().nullable() });

export const creditsGrantedResponse = z.object({
  userId: z.string(),
  amount: z.number().describe('Positive for a grant, negative for a correction'),
  credits: z.number().describe('The balance after the entry'),
  entryId: z.string(),
  reason: z.string(),
});

export const tierSetResponse = z.object({ userId: z.string(), tier: z.enum(TIERS), limits: planLimitsResponse });
