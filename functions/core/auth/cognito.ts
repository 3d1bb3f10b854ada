import type { CognitoJwtVerifier } from 'aws-jwt-verify';
import type { IdentityVerifier } from './credentials.ts';

/**
 * aws-jwt-verify, imported when the first session token arrives rather than bundled: most calls
 * carry platform tokens, and its 17 KB were what held the agents function over the 200 KB budget
 * (issue 11). The cloud ships its files beside the bundle of every function that authenticates
 * (lib/cloud/area-functions.ts), as the search libraries are shipped; locally node_modules has it.
 * The specifier is a variable so esbuild leaves the import alone.
 */
const VERIFIER_PACKAGE = 'aws-jwt-verify';
let verifierModule: Promise<{ CognitoJwtVerifier: typeof CognitoJwtVerifier }> | undefined;

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
  let verifier: Promise<ReturnType<typeof createPoolVerifier>> | undefined;
  return {
    async verify(token) {
      if (verifier === undefined) {
        verifier = loadVerifierModule().then((module) => createPoolVerifier(module.CognitoJwtVerifier, options));
        verifier.catch(() => (verifier = undefined));
      }
      // A load failure (files missing from a bundle) is a fault of the deployment, not a bad token: it throws.
      const ready = await verifier;
      try {
        const payload = await ready.verify(token);
        return { subject: payload.sub, email: typeof payload['email'] === 'string' ? payload['email'] : null };
      } catch {
        return null;
      }
    },
  };
}

function loadVerifierModule(): Promise<{ CognitoJwtVerifier: typeof CognitoJwtVerifier }> {
  verifierModule ??= import(VERIFIER_PACKAGE) as Promise<{ CognitoJwtVerifier: typeof CognitoJwtVerifier }>;
  verifierModule.catch(() => (verifierModule = undefined));
  return verifierModule;
}

function createPoolVerifier(Verifier: typeof CognitoJwtVerifier, options: CognitoVerifierOptions) {
  const verifier = Verifier.create({ userPoolId: options.userPoolId, tokenUse: 'id', clientId: options.clientId });
  if (options.jwks) verifier.cacheJwks(options.jwks as unknown as Parameters<typeof verifier.cacheJwks>[0]);
  return verifier;
}
