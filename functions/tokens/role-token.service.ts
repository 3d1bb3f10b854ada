import type { UserActor } from '../core/auth/actor.ts';
import { digestSecret, digestsEqual, readSecret } from '../core/auth/secrets.ts';
import { ConflictError, ValidationError } from '../core/errors.ts';
import type { KeyStore } from '../keys/key.store.ts';
import type { UserStore } from '../users/user.store.ts';
import { MAX_ACTIVE_ROLE_TOKENS, publicRoleToken } from './role-token.schema.ts';
import { expiryFrom, issueToken, ownedToken, type TokenPorts } from './token.service.ts';

export interface RoleTokenPorts extends TokenPorts {
  readonly keys: KeyStore;
  readonly users: UserStore;
}

/**
 * A role token authenticates as its owner with a reduced scope (run and read) and carries the
 * names of the keys runs may receive. Every named key must be stored already, so a typo is caught
 * here rather than as a missing key at run time.
 */
export async function createRoleToken(
  actor: UserActor,
  input: { name: string; keys: string[]; expiresAt?: number | undefined; expiresInDays?: number | undefined },
  ports: RoleTokenPorts,
) {
  const now = ports.clock.now();
  const expiresAt = expiryFrom(input, now);
  const keys = [...new Set(input.keys)].sort();
  const stored = new Set((await ports.keys.list(actor.userId)).map((k) => k.serviceName));
  const missing = keys.filter((k) => !stored.has(k));
  if (missing.length > 0)
    throw new ValidationError('Invalid request body', [`keys: no stored key for ${missing.join(', ')} (store it with POST /keys/store first)`]);
  if ((await ports.tokens.countActive(actor.userId, 'role')) >= MAX_ACTIVE_ROLE_TOKENS) {
    throw new ConflictError(`An account may hold at most ${MAX_ACTIVE_ROLE_TOKENS} active role tokens; revoke one first.`);
  }
  const issued = await issueToken({ userId: actor.userId, kind: 'role', name: input.name, expiresAt, keys }, ports, now);
  return { tokenId: issued.tokenId, token: issued.token, name: issued.name, keys, tokenPrefix: issued.tokenPrefix, createdAt: issued.createdAt, expiresAt };
}

export async function listRoleTokens(actor: UserActor, query: { limit: number; cursor?: string | undefined; includeRevoked: boolean }, ports: TokenPorts) {
  const page = await ports.tokens.listByUser(actor.userId, { limit: query.limit, cursor: query.cursor, kind: 'role' });
  const roleTokens = page.items.filter((t) => query.includeRevoked || t.status === 'active').map(publicRoleToken);
  return { roleTokens, count: roleTokens.length, nextCursor: page.nextCursor };
}

export async function revokeRoleToken(actor: UserActor, tokenId: string, ports: TokenPorts) {
  const token = await ownedToken(actor, tokenId, 'role', ports);
  await ports.tokens.revoke(token, ports.clock.now());
  return { tokenId, status: 'revoked' as const, message: 'Role token revoked.' };
}

/**
 * Lets anyone holding a role token learn whether it is valid, whose it is and which keys it
 * carries: key names only, never values. Every kind of invalid token gets the same answer.
 */
export async function validateRoleToken(token: string, ports: RoleTokenPorts) {
  const invalid = { valid: false as const };
  const secret = readSecret('roleToken', token);
  if (secret === null) return invalid;
  const digest = digestSecret(token);
  const record = secret.locator !== null ? await ports.tokens.get(secret.locator.tokenId) : await ports.tokens.findByDigest(digest);
  if (record === null || record.kind !== 'role' || record.status !== 'active' || !digestsEqual(record.digest, digest)) return invalid;
  if (record.expiresAt !== null && record.expiresAt <= ports.clock.now()) return invalid;
  const owner = await ports.users.get(record.userId);
  if (owner === null || owner.status !== 'active') return invalid;
  return { valid: true as const, ownerAlias: owner.alias, name: record.name, keys: record.keys ?? [], expiresAt: record.expiresAt };
}
