import type { AuthMode } from '../../../lib/manifest/types.ts';
import { AccessDeniedError, AuthenticationRequiredError } from '../errors.ts';
import { anonymous, type Actor, type UserActor } from './actor.ts';
import type { AccountCredential, CredentialLookup, IdentityVerifier } from './credentials.ts';
import { RUN_TOKEN_PREFIX, type RunTokens } from './run-token.ts';
import { digestSecret, digestsEqual, isWellFormedSecret, readSecret } from './secrets.ts';

/** Skip rewriting `lastUsedAt` more often than this, so a busy token costs no extra write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface CredentialInput {
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

export interface ResolveActorPorts {
  readonly credentials: CredentialLookup;
  readonly identity: IdentityVerifier | null;
  /** Verifies the short-lived tokens runs use to call the platform; null where none are issued. */
  readonly runTokens: RunTokens | null;
  readonly now: number;
  /**
   * Takes the token's `lastUsedAt` write, which the caller awaits before it answers, so the write
   * goes on beside the rest of the request instead of a step before it; awaited here when absent.
   */
  readonly afterAuth?: (write: Promise<void>) => void;
}

/**
 * Resolves the caller for a route's auth mode. Any presented credential must be valid, even on
 * optional routes; failures never say which part was wrong.
 */
export async function resolveActor(mode: AuthMode, input: CredentialInput, ports: ResolveActorPorts): Promise<Actor> {
  if (mode === 'public') return anonymous;
  const actor = await authenticate(input, ports);
  if (actor === null) {
    if (mode === 'optional') return anonymous;
    throw new AuthenticationRequiredError();
  }
  if (mode === 'admin' && !actor.isAdmin) throw new AccessDeniedError('This endpoint is for platform operators only.');
  return actor;
}

/** Null when no credential was presented; throws when one was presented and is not valid. */
async function authenticate(input: CredentialInput, ports: ResolveActorPorts): Promise<UserActor | null> {
  const authorization = input.headers['authorization'];
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) throw new AuthenticationRequiredError();
    return authenticateBearer(match[1], ports);
  }
  const headerUser = input.headers['x-svc-userid'];
  const headerSecret = input.headers['x-svc-secretkey'];
  if (headerUser !== undefined || headerSecret !== undefined) return authenticateSecretKey(headerUser, headerSecret, ports);
  const queryUser = input.query['userId'];
  const querySecret = input.query['secretServiceKey'];
  if (querySecret !== undefined) return authenticateSecretKey(queryUser, querySecret, ports);
  return null;
}

async function authenticateBearer(token: string, ports: ResolveActorPorts): Promise<UserActor> {
  if (token.startsWith(RUN_TOKEN_PREFIX)) return authenticateRunToken(token, ports);
  const userToken = readSecret('userToken', token);
  const secret = userToken ?? readSecret('roleToken', token);
  if (secret === null) return authenticateSession(token, ports);
  const kind = userToken !== null ? 'user' : 'role';
  const digest = digestSecret(token);
  // The locator only says where to look: the record found must hold this digest and name the account.
  const found = await ports.credentials.findToken(digest, secret.locator);
  const credential = found?.token;
  const account = found?.account;
  if (
    credential === undefined ||
    credential.kind !== kind ||
    credential.status !== 'active' ||
    !digestsEqual(credential.digest, digest) ||
    (credential.expiresAt !== null && credential.expiresAt <= ports.now) ||
    account === null ||
    account === undefined ||
    account.userId !== credential.userId ||
    account.status !== 'active'
  ) {
    throw new AuthenticationRequiredError();
  }
  if (credential.lastUsedAt === null || ports.now - credential.lastUsedAt > LAST_USED_RESOLUTION_MS) {
    const marked = ports.credentials.markTokenUsed(credential.tokenId, ports.now);
    if (ports.afterAuth === undefined) await marked;
    else ports.afterAuth(marked);
  }
  return toActor(account, kind === 'user' ? 'user-token' : 'role-token', credential.tokenId, credential.keys);
}

/** A run's credential: its owner, with the role scope (run and read) and the run's keys. */
async function authenticateRunToken(token: string, ports: ResolveActorPorts): Promise<UserActor> {
  const claims = ports.runTokens === null ? null : await ports.runTokens.verify(token);
  if (claims === null) throw new AuthenticationRequiredError();
  const account = await activeAccount(claims.userId, ports);
  const actor: UserActor = { ...toActor(account, 'run-token', null, null), scope: 'role', roleKeys: claims.keys };
  if (claims.agents === undefined) return actor;
  return {
    ...actor,
    agents: claims.agents,
    ...(claims.embedTokenId === undefined ? {} : { embedTokenId: claims.embedTokenId }),
    ...(claims.visitorId === undefined ? {} : { visitorId: claims.visitorId }),
  };
}

async function authenticateSession(token: string, ports: ResolveActorPorts): Promise<UserActor> {
  const identity = ports.identity === null ? null : await ports.identity.verify(token);
  if (identity === null) throw new AuthenticationRequiredError();
  const account = await ports.credentials.accountForIdentity(identity.subject, identity.email);
  if (account.status !== 'active') throw new AuthenticationRequiredError();
  return toActor(account, 'identity-provider', null, null);
}

async function authenticateSecretKey(userId: string | undefined, secret: string | undefined, ports: ResolveActorPorts): Promise<UserActor> {
  if (!userId || !secret || !isWellFormedSecret('secretKey', secret)) throw new AuthenticationRequiredError();
  const account = await activeAccount(userId, ports);
  if (!digestsEqual(account.secretKeyDigest, digestSecret(secret))) throw new AuthenticationRequiredError();
  return toActor(account, 'secret-key', null, null);
}

async function activeAccount(userId: string, ports: ResolveActorPorts): Promise<AccountCredential> {
  const account = await ports.credentials.getAccount(userId);
  if (account === null || account.status !== 'active') throw new AuthenticationRequiredError();
  return account;
}

function toActor(account: AccountCredential, via: UserActor['via'], tokenId: string | null, roleKeys: readonly string[] | null): UserActor {
  return {
    kind: 'user',
    userId: account.userId,
    alias: account.alias,
    isAdmin: account.isAdmin && via !== 'role-token' && via !== 'run-token',
    via,
    tokenId,
    scope: via === 'role-token' ? 'role' : 'full',
    roleKeys: via === 'role-token' ? (roleKeys ?? []) : null,
    account,
  };
}
