import * as z from 'zod';

export const aliasSchema = z
  .string()
  .min(3, 'must be at least 3 characters')
  .max(32, 'must be at most 32 characters')
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'must be lowercase letters, digits and hyphens, starting and ending with a letter or digit');

/** Aliases that would shadow platform paths or mislead users. */
export const RESERVED_ALIASES: ReadonlySet<string> = new Set([
  'api',
  'www',
  'root',
  'system',
  'platform',
  'support',
  'help',
  'anonymous',
  'null',
  'undefined',
  'well-known',
]);

export const setAliasBody = z.object({ alias: aliasSchema });

export const updateProfileBody = z
  .object({
    displayName: z.string().trim().min(1).max(100).nullable().optional(),
    email: z.email().max(254).nullable().optional(),
    bio: z.string().max(1000).nullable().optional(),
  })
  .refine((b) => b.displayName !== undefined || b.email !== undefined || b.bio !== undefined, {
    message: 'give at least one of displayName, email, bio',
  });

export const deleteAccountBody = z.object({
  confirm: z.literal(true, { error: 'must be true to delete the account permanently' }),
});

/** A stored account. Credits are a number of platform credits; the secret key is kept as a digest only. */
export interface UserRecord {
  readonly userId: string;
  /** Constant partition of the `byKind` index, which lists accounts without a Scan. */
  readonly kind: 'user';
  readonly alias: string | null;
  readonly email: string | null;
  readonly displayName: string | null;
  readonly bio: string | null;
  readonly credits: number;
  /** Month (`YYYY-MM`) of the last monthly free credits, set by the credits kernel; absent before the first. */
  readonly grantMonth?: string;
  readonly isAdmin: boolean;
  readonly status: 'active' | 'deleted';
  readonly secretKeyDigest: string;
  readonly identitySubject: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly deletedAt: number | null;
}

/** What `/user/info` and the admin listing show: never the secret key digest. */
export function publicUser(user: UserRecord) {
  return {
    userId: user.userId,
    alias: user.alias,
    email: user.email,
    displayName: user.displayName,
    bio: user.bio,
    credits: user.credits,
    isAdmin: user.isAdmin,
    status: user.status,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const epochMs = z.number().describe('Milliseconds since the epoch');

/** An account as `/user/info`, `/user/profile` and the admin listing show it (`publicUser`). */
export const userResponse = z.object({
  userId: z.string(),
  alias: z.string().nullable().describe('The public handle in resource slugs; null until one is set'),
  email: z.string().nullable(),
  displayName: z.string().nullable(),
  bio: z.string().nullable(),
  credits: z.number().describe('Platform credits available now'),
  isAdmin: z.boolean(),
  status: z.enum(['active', 'deleted']),
  createdAt: epochMs,
  updatedAt: epochMs,
});

export const userCreditsResponse = z.object({
  userId: z.string(),
  credits: z.number().describe('Platform credits available now'),
  monthlyFreeCredits: z.number().describe('Credits granted free at the start of each month'),
  recentEntries: z
    .array(
      z.object({
        entryId: z.string(),
        amount: z.number().describe('Positive for a grant, negative for a debit'),
        balanceAfter: z.number(),
        reason: z.string(),
        requestId: z.string().nullable().describe('The request that caused the entry, when there was one'),
        createdAt: epochMs,
      }),
    )
    .describe('The latest ledger entries, newest first'),
});

export const aliasSetResponse = z.object({
  alias: z.string(),
  previousAlias: z.string().nullable().describe('The alias before this change; null when none was set'),
  message: z.string(),
});

export const accountDeletedResponse = z.object({
  userId: z.string(),
  status: z.literal('deleted'),
  revokedTokens: z.number().int().describe('How many active tokens the deletion revoked'),
  message: z.string(),
});
