import * as z from 'zod';
import { serviceNameSchema } from '../keys/key.schema.ts';
import {
  issuedTokenResponse,
  listTokensQuery,
  ONE_EXPIRY_MESSAGE,
  oneExpiryAtMost,
  publicToken,
  tokenExpiry,
  tokenIdSchema,
  tokenName,
  type TokenRecord,
  tokenResponse,
  tokenRevokedResponse,
} from './token.schema.ts';

export const MAX_ACTIVE_ROLE_TOKENS = 50;

export const createRoleTokenBody = z
  .object({
    name: tokenName,
    /** Names of the owner's stored keys that runs made with this token receive. */
    keys: z.array(serviceNameSchema).max(50, 'may list at most 50 keys').default([]),
    ...tokenExpiry,
  })
  .refine(oneExpiryAtMost, ONE_EXPIRY_MESSAGE);

/** Role tokens list exactly like access tokens. */
export const listRoleTokensQuery = listTokensQuery;

export const revokeRoleTokenBody = z.object({ tokenId: tokenIdSchema });

/** Validation must answer `{valid: false}` for anything, so only the type is checked here. */
export const validateRoleTokenBody = z.object({ token: z.string().max(200, 'is too long') });

/** How a role token appears in listings: an access token's fields plus the names of its keys. */
export function publicRoleToken(token: TokenRecord) {
  return { ...publicToken(token), keys: token.keys ?? [] };
}

// Responses (the `data` of each success), as the handlers answer them.

const keyNames = z.array(z.string()).describe('Names of the stored keys runs authenticated by this token receive (never their values)');

export const roleTokenResponse = tokenResponse.extend({ keys: keyNames });
export const issuedRoleTokenResponse = issuedTokenResponse.extend({ keys: keyNames });
export const roleTokenListResponse = z.object({ roleTokens: z.array(roleTokenResponse), count: z.number().int(), nextCursor: z.string().nullable() });
export const roleTokenRevokedResponse = tokenRevokedResponse;
export const roleTokenValidationResponse = z.union([
  z.object({ valid: z.literal(false) }),
  z.object({
    valid: z.literal(true),
    ownerAlias: z.string().nullable(),
    name: z.string(),
    keys: keyNames,
    expiresAt: z.number().nullable().describe('Milliseconds since the epoch; null when the token never expires'),
  }),
]);
