import { z } from 'zod';
import { serviceNameSchema } from '../keys/key.schema.ts';
import type { TokenRecord } from './token.schema.ts';
import { tokenIdSchema } from './token.schema.ts';

export const MAX_ACTIVE_ROLE_TOKENS = 50;

export const createRoleTokenBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    /** Names of the owner's stored keys that runs made with this token receive. */
    keys: z.array(serviceNameSchema).max(50, 'may list at most 50 keys').default([]),
    expiresAt: z.number().int().positive().optional(),
    expiresInDays: z.number().int().min(1).max(3650).optional(),
  })
  .refine((b) => b.expiresInDays === undefined || b.expiresAt === undefined, { message: 'give expiresInDays or expiresAt, not both' });

export const listRoleTokensQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().optional(),
  includeRevoked: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
});

export const revokeRoleTokenBody = z.object({ tokenId: tokenIdSchema });

/** Validation must answer `{valid: false}` for anything, so only the type is checked here. */
export const validateRoleTokenBody = z.object({ token: z.string().max(200, 'is too long') });

export function publicRoleToken(token: TokenRecord) {
  return {
    tokenId: token.tokenId,
    name: token.name,
    keys: token.keys ?? [],
    tokenPrefix: token.tokenPrefix,
    status: token.status,
    createdAt: token.createdAt,
    expiresAt: token.expiresAt,
    lastUsedAt: token.lastUsedAt,
    revokedAt: token.revokedAt,
  };
}
