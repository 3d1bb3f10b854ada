import * as z from 'zod';

export const MAX_ACTIVE_TOKENS = 50;

export const tokenName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
export const tokenIdSchema = z.string().regex(/^tok_[0-9A-Za-z]{21}$/, 'is not a token id');

/** How long a token lives, for both token kinds: omit both fields for a token that never expires. */
export const tokenExpiry = {
  /** Days until the token stops working. */
  expiresInDays: z.number().int().min(1).max(3650).optional(),
  /** Epoch milliseconds; alternative to expiresInDays. */
  expiresAt: z.number().int().positive().optional(),
};

export function oneExpiryAtMost(body: { expiresInDays?: number | undefined; expiresAt?: number | undefined }): boolean {
  return body.expiresInDays === undefined || body.expiresAt === undefined;
}

export const ONE_EXPIRY_MESSAGE = { message: 'give expiresInDays or expiresAt, not both' };

export const createTokenBody = z.object({ name: tokenName.default('default'), ...tokenExpiry }).refine(oneExpiryAtMost, ONE_EXPIRY_MESSAGE);

export const listTokensQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().optional(),
  includeRevoked: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});

export const tokenIdParams = z.object({ tokenId: tokenIdSchema });
export const tokenIdBody = z.object({ tokenId: tokenIdSchema });
export const updateTokenBody = z.object({ tokenId: tokenIdSchema, name: tokenName });

/** One access token. The secret itself is never stored: only its SHA-256 digest. */
export interface TokenRecord {
  readonly tokenId: string;
  readonly userId: string;
  readonly kind: 'user' | 'role';
  readonly name: string;
  readonly digest: string;
  readonly tokenPrefix: string;
  readonly status: 'active' | 'revoked';
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number | null;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
  /** Role tokens: names of the keys attached. */
  readonly keys: string[] | null;
}

/** How a token appears in list and get responses. */
export function publicToken(token: TokenRecord) {
  return {
    tokenId: token.tokenId,
    name: token.name,
    tokenPrefix: token.tokenPrefix,
    status: token.status,
    createdAt: token.createdAt,
    expiresAt: token.expiresAt,
    lastUsedAt: token.lastUsedAt,
    revokedAt: token.revokedAt,
  };
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const epochMs = z.number().describe('Milliseconds since the epoch');
const expiresAtResponse = z.number().nullable().describe('Milliseconds since the epoch; null when the token never expires');

/** A token as lists and reads show it (`publicToken`): never the token itself. */
export const tokenResponse = z.object({
  tokenId: z.string(),
  name: z.string(),
  tokenPrefix: z.string().describe('The first characters of the token, to recognise it'),
  status: z.enum(['active', 'revoked']),
  createdAt: epochMs,
  expiresAt: expiresAtResponse,
  lastUsedAt: epochMs.nullable(),
  revokedAt: epochMs.nullable(),
});

/** The only answer that carries the token itself: keep it, it is not shown again. */
export const issuedTokenResponse = z.object({
  tokenId: z.string(),
  token: z.string().describe('The Bearer token; shown only in this answer'),
  name: z.string(),
  tokenPrefix: z.string(),
  createdAt: epochMs,
  expiresAt: expiresAtResponse,
});

export const tokenListResponse = z.object({ tokens: z.array(tokenResponse), count: z.number().int(), nextCursor: z.string().nullable() });
export const tokenRevokedResponse = z.object({ tokenId: z.string(), status: z.literal('revoked'), message: z.string() });
