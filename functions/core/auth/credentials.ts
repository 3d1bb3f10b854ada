import type { TokenLocator } from './secrets.ts';

/** What the kernel needs to know about a token to authenticate a request. */
export interface TokenCredential {
  readonly tokenId: string;
  readonly userId: string;
  readonly kind: 'user' | 'role';
  readonly digest: string;
  readonly status: 'active' | 'revoked';
  /** Epoch ms, or null for tokens that never expire. */
  readonly expiresAt: number | null;
  readonly lastUsedAt: number | null;
  /** Role tokens only: names of the owner's keys runs may receive. */
  readonly keys: readonly string[] | null;
}

/** What the kernel needs to know about an account to authenticate a request. */
export interface AccountCredential {
  readonly userId: string;
  readonly alias: string | null;
  readonly isAdmin: boolean;
  readonly status: 'active' | 'deleted';
  readonly secretKeyDigest: string;
  /** The month (`YYYY-MM`, UTC) of the last monthly free credits the account received; null before any. */
  readonly grantMonth: string | null;
  /**
   * The account's stored item as this read returned it. The area that owns accounts answers from
   * it (`GET /user/info`) rather than reading the same item again in the same request.
   */
  readonly item: object;
}

/**
 * Port through which actor resolution reads credentials. Implemented by the users and tokens
 * stores; every read must be strongly consistent so revocation takes effect on the next request.
 */
export interface CredentialLookup {
  /**
   * A token with its account, read together: the ones `locator` names when the token carries one,
   * else the token that holds `digest`; null when there is none. The caller checks the digest.
   */
  findToken(digest: string, locator: TokenLocator | null): Promise<{ token: TokenCredential; account: AccountCredential | null } | null>;
  getAccount(userId: string): Promise<AccountCredential | null>;
  /** Account for an identity-provider subject, created on first sign-in. */
  accountForIdentity(subject: string, email: string | null): Promise<AccountCredential>;
  /** Best-effort `lastUsedAt` bookkeeping. */
  markTokenUsed(tokenId: string, now: number): Promise<void>;
}

/** Verifies identity-provider session tokens (Cognito JWTs in the cloud). */
export interface IdentityVerifier {
  /** The subject and email of a valid session token, or null when it is not one. */
  verify(token: string): Promise<{ subject: string; email: string | null } | null>;
}
