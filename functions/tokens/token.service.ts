import type { UserActor } from '../core/auth/actor.ts';
import { digestSecret, generateSecret, secretPrefixHint } from '../core/auth/secrets.ts';
import type { Clock } from '../core/clock.ts';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import { sortableId } from '../core/ids.ts';
import { MAX_ACTIVE_TOKENS, publicToken, type TokenRecord } from './token.schema.ts';
import type { TokenStore } from './token.store.ts';

export interface TokenPorts {
  readonly tokens: TokenStore;
  readonly clock: Clock;
}

const DAY_MS = 86_400_000;

/** The only response that ever carries the token itself. */
export interface IssuedToken {
  readonly tokenId: string;
  readonly token: string;
  readonly name: string;
  readonly tokenPrefix: string;
  readonly createdAt: number;
  readonly expiresAt: number | null;
}

/** Issues a token of either kind; the secret exists only in the return value. */
export async function issueToken(
  input: { userId: string; kind: TokenRecord['kind']; name: string; expiresAt: number | null; keys: string[] | null },
  ports: TokenPorts,
  now = ports.clock.now(),
): Promise<IssuedToken & { record: TokenRecord }> {
  const tokenId = sortableId('tok_', now);
  const token = generateSecret(input.kind === 'user' ? 'userToken' : 'roleToken', { tokenId, userId: input.userId });
  const record: TokenRecord = {
    tokenId,
    userId: input.userId,
    kind: input.kind,
    name: input.name,
    digest: digestSecret(token),
    tokenPrefix: secretPrefixHint(token),
    status: 'active',
    createdAt: now,
    updatedAt: now,
    expiresAt: input.expiresAt,
    lastUsedAt: null,
    revokedAt: null,
    keys: input.keys,
  };
  await ports.tokens.create(record);
  return { tokenId: record.tokenId, token, name: input.name, tokenPrefix: record.tokenPrefix, createdAt: now, expiresAt: input.expiresAt, record };
}

/** Issues a user access token for `userId`; used by token create, admin user create and bootstrap. */
export async function issueUserToken(userId: string, name: string, expiresAt: number | null, ports: TokenPorts, now = ports.clock.now()): Promise<IssuedToken> {
  const { record: _record, ...issued } = await issueToken({ userId, kind: 'user', name, expiresAt, keys: null }, ports, now);
  return issued;
}

/** The owner's token of `kind`; another user's token is reported as absent, so ids cannot be probed. */
export async function ownedToken(actor: UserActor, tokenId: string, kind: TokenRecord['kind'], ports: TokenPorts): Promise<TokenRecord> {
  const token = await ports.tokens.get(tokenId);
  if (token === null || token.userId !== actor.userId || token.kind !== kind) throw new NotFoundError(`Token ${tokenId} not found.`);
  return token;
}

/** Resolves an expiry given as days from now or as an epoch-ms instant; null means never. */
export function expiryFrom(input: { expiresInDays?: number | undefined; expiresAt?: number | undefined }, now: number): number | null {
  const expiresAt = input.expiresInDays !== undefined ? now + input.expiresInDays * DAY_MS : (input.expiresAt ?? null);
  if (expiresAt !== null && expiresAt <= now) throw new ValidationError('Invalid request body', ['expiresAt: must be in the future']);
  return expiresAt;
}

export async function createToken(
  actor: UserActor,
  input: { name: string; expiresInDays?: number | undefined; expiresAt?: number | undefined },
  ports: TokenPorts,
): Promise<IssuedToken> {
  const now = ports.clock.now();
  const expiresAt = expiryFrom(input, now);
  if ((await ports.tokens.countActive(actor.userId, 'user')) >= MAX_ACTIVE_TOKENS) {
    throw new ConflictError(`An account may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke one first.`);
  }
  return issueUserToken(actor.userId, input.name, expiresAt, ports, now);
}

export async function listTokens(actor: UserActor, query: { limit: number; cursor?: string | undefined; includeRevoked: boolean }, ports: TokenPorts) {
  const page = await ports.tokens.listByUser(actor.userId, { limit: query.limit, cursor: query.cursor, kind: 'user' });
  const tokens = page.items.filter((t) => query.includeRevoked || t.status === 'active').map(publicToken);
  return { tokens, count: tokens.length, nextCursor: page.nextCursor };
}

export async function getToken(actor: UserActor, tokenId: string, ports: TokenPorts) {
  return publicToken(await ownedToken(actor, tokenId, 'user', ports));
}

export async function renameToken(actor: UserActor, input: { tokenId: string; name: string }, ports: TokenPorts) {
  await ownedToken(actor, input.tokenId, 'user', ports);
  const updated = await ports.tokens.rename(input.tokenId, actor.userId, input.name, ports.clock.now());
  if (updated === null) throw new NotFoundError(`Token ${input.tokenId} not found.`);
  return publicToken(updated);
}

export async function revokeToken(actor: UserActor, tokenId: string, ports: TokenPorts) {
  const token = await ownedToken(actor, tokenId, 'user', ports);
  await ports.tokens.revoke(token, ports.clock.now());
  return { tokenId, status: 'revoked' as const, message: 'Token revoked.' };
}

/** Revokes every token of an account (account deletion); pages through all of them. */
export async function revokeAllTokens(userId: string, ports: TokenPorts): Promise<number> {
  let revoked = 0;
  for (const kind of ['user', 'role'] as const) {
    let cursor: string | undefined;
    do {
      const page = await ports.tokens.listByUser(userId, { limit: 100, cursor, kind });
      for (const token of page.items) {
        if (token.status !== 'active') continue;
        await ports.tokens.revoke(token, ports.clock.now());
        revoked++;
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  return revoked;
}

/** New secret for an existing token id; the old secret stops working at once. */
export async function regenerateToken(actor: UserActor, tokenId: string, ports: TokenPorts): Promise<IssuedToken> {
  const current = await ownedToken(actor, tokenId, 'user', ports);
  if (current.status !== 'active') throw new ConflictError(`Token ${tokenId} is revoked and cannot be regenerated.`);
  const now = ports.clock.now();
  if (current.expiresAt !== null && current.expiresAt <= now) throw new ConflictError(`Token ${tokenId} has expired; create a new one.`);
  const token = generateSecret('userToken', { tokenId, userId: current.userId });
  const tokenPrefix = secretPrefixHint(token);
  if (!(await ports.tokens.replaceDigest(current, digestSecret(token), tokenPrefix, now))) {
    throw new ConflictError(`Token ${tokenId} changed while regenerating; retry.`);
  }
  return { tokenId, token, name: current.name, tokenPrefix, createdAt: current.createdAt, expiresAt: current.expiresAt };
}
