import type { AccountCredential, CredentialLookup, TokenCredential } from '../core/auth/credentials.ts';
import { readItems, type Db } from '../core/db/dynamo.ts';
import type { TokenStore } from '../tokens/token.store.ts';
import type { UserRecord } from './user.schema.ts';
import { createAccount, type UserPorts } from './user.service.ts';

function toAccount(user: UserRecord): AccountCredential {
  return {
    userId: user.userId,
    alias: user.alias,
    isAdmin: user.isAdmin,
    status: user.status,
    secretKeyDigest: user.secretKeyDigest,
    grantMonth: user.grantMonth ?? null,
    item: user,
  };
}

/** The kernel's credential port, answered from the users and tokens stores. */
export function createCredentialLookup(ports: UserPorts & { tokens: TokenStore; db: Db }): CredentialLookup {
  return {
    async findToken(digest, locator) {
      // A token that carries its locator names its record and account: one BatchGetItem. One issued
      // before locators existed (or for ids of another shape) is found through its digest pointer,
      // which names both as well, so that is one read more.
      const at = locator ?? (await ports.tokens.findPointer(digest));
      if (at === null) return null;
      const [token, pointerUser] =
        at.userId === null
          ? [await ports.tokens.get(at.tokenId), null]
          : await readItems(ports.db, [ports.tokens.read(at.tokenId), ports.users.read(at.userId)]);
      if (token === null) return null;
      // A located token whose record names another account was not issued by us: no second read.
      const user = pointerUser?.userId === token.userId ? pointerUser : locator !== null ? null : await ports.users.get(token.userId);
      const credential: TokenCredential = {
        tokenId: token.tokenId,
        userId: token.userId,
        kind: token.kind,
        digest: token.digest,
        status: token.status,
        expiresAt: token.expiresAt,
        lastUsedAt: token.lastUsedAt,
        keys: token.keys,
      };
      return { token: credential, account: user === null ? null : toAccount(user) };
    },
    async getAccount(userId) {
      const user = await ports.users.get(userId);
      return user === null ? null : toAccount(user);
    },
    async accountForIdentity(subject, email) {
      const existing = await ports.users.get(subject);
      if (existing !== null) return toAccount(existing);
      try {
        await createAccount({ identitySubject: subject, email: email ?? undefined }, ports, null);
      } catch (error) {
        // A concurrent first sign-in created it; read it below.
        if (!(error instanceof Error && error.name === 'ConflictError')) throw error;
      }
      const created = await ports.users.get(subject);
      if (created === null) throw new Error(`Account for identity ${subject} could not be created`);
      return toAccount(created);
    },
    markTokenUsed: (tokenId, now) => ports.tokens.markUsed(tokenId, now),
  };
}
