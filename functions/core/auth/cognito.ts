import { CognitoJwtVerifier } from 'aws-jwt-verify';
import type { IdentityVerifier } from './credentials.ts';

export interface CognitoVerifierOptions {
  readonly userPoolId: string;
  readonly clientId: string;
  /** A JWKS to trust without fetching it (tests; functions without internet access). */
  readonly jwks?: { keys: Record<string, unknown>[] };
}

/**
 * Verifies Cognito ID tokens (signature against the pool's JWKS, issuer, audience = the app
 * client, token_use = id, expiry). Anything that is not a valid session token verifies as null, so
 * the caller answers the same 401 as for any other bad credential.
 */
export function createCognitoVerifier(options: CognitoVerifierOptions): IdentityVerifier {
  const verifier = CognitoJwtVerifier.create({ userPoolId: options.userPoolId, tokenUse: 'id', clientId: options.clientId });
  if (options.jwks) verifier.cacheJwks(options.jwks as unknown as Parameters<typeof verifier.cacheJwks>[0]);
  return {
    async verify(token) {
      try {
        const payload = await verifier.verify(token);
        return { subject: payload.sub, email: typeof payload['email'] === 'string' ? payload['email'] : null };
      } catch {
        return null;
      }
    },
  };
}
