import type { UserActor } from '../core/auth/actor.ts';
import { digestSecret, generateSecret } from '../core/auth/secrets.ts';
import type { Clock } from '../core/clock.ts';
import type { Credits } from '../core/credits.ts';
import { ConflictError, InsufficientCreditsError, NotFoundError, ValidationError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { TokenStore } from '../tokens/token.store.ts';
import { issueUserToken, revokeAllTokens } from '../tokens/token.service.ts';
import { publicUser, RESERVED_ALIASES, type UserRecord } from './user.schema.ts';
import type { UserStore } from './user.store.ts';

export interface UserPorts {
  readonly users: UserStore;
  readonly tokens: TokenStore;
  readonly credits: Credits;
  readonly clock: Clock;
}

async function currentUser(actor: UserActor, ports: Pick<UserPorts, 'users'>): Promise<UserRecord> {
  const user = await ports.users.get(actor.userId);
  if (user === null) throw new NotFoundError('Account not found.');
  return user;
}

/**
 * The account auth read for this request (credential-lookup.ts puts the record there), when it is
 * the actor's own; null when the actor was not made by auth.
 */
function accountReadByAuth(actor: UserActor): UserRecord | null {
  const item = actor.account?.item as UserRecord | undefined;
  return item !== undefined && item.userId === actor.userId ? item : null;
}

/**
 * The account as it is now. Auth read it at the start of this request, strongly consistent, so
 * that read is the answer when it already shows this month's free credits. Otherwise the grant is
 * applied (by this request or a concurrent one, possibly after auth's read) and the account is
 * read again for the balance: once a month, not on every request.
 */
async function accountNow(actor: UserActor, ports: Pick<UserPorts, 'users' | 'credits'>): Promise<UserRecord> {
  const read = accountReadByAuth(actor);
  if (read !== null && ports.credits.grantIsCurrent({ grantMonth: read.grantMonth ?? null })) return read;
  await ports.credits.applyMonthlyGrant(actor.userId);
  return currentUser(actor, ports);
}

export async function getUserInfo(actor: UserActor, ports: Pick<UserPorts, 'users' | 'credits'>) {
  return publicUser(await accountNow(actor, ports));
}

/** The balance, this month's free grant and the latest ledger entries (grants and debits). */
export async function getUserCredits(actor: UserActor, ports: Pick<UserPorts, 'users' | 'credits'>) {
  const user = await accountNow(actor, ports);
  // After the grant (if any), so its ledger line is among the entries.
  const entries = await ports.credits.recentEntries(actor.userId, 20);
  return {
    userId: user.userId,
    credits: user.credits,
    monthlyFreeCredits: ports.credits.monthlyGrant,
    recentEntries: entries.map((e) => ({
      entryId: e.entryId,
      amount: e.amount,
      balanceAfter: e.balanceAfter,
      reason: e.reason,
      requestId: e.requestId,
      createdAt: e.createdAt,
    })),
  };
}

/**
 * Sets or changes the account's alias. The claim (unique key in `aliases`) is written first, then
 * the account; the previous alias is released last (the protocol of `core/db/unique-claim.ts`). A
 * crash after the claim leaves a claim that the same user can complete and that others may take
 * over once it is stale.
 */
export async function setAlias(actor: UserActor, alias: string, ports: UserPorts) {
  if (RESERVED_ALIASES.has(alias)) throw new ValidationError('Invalid request body', [`alias: "${alias}" is reserved`]);
  const user = await currentUser(actor, ports);
  if (user.alias === alias) return { alias, previousAlias: alias, message: 'Alias unchanged.' };
  const claim = { alias, userId: user.userId, claimedAt: ports.clock.now() };
  if (!(await ports.users.claimAlias(claim))) {
    throw new ConflictError(`Alias "${alias}" is already taken.`);
  }
  if (!(await ports.users.setAlias(user.userId, alias, user.alias, ports.clock.now()))) {
    await ports.users.releaseAlias(claim);
    throw new ConflictError('The account changed while setting the alias; retry.');
  }
  if (user.alias !== null) {
    const previous = await ports.users.getAliasClaim(user.alias);
    if (previous !== null && previous.userId === user.userId) await ports.users.releaseAlias(previous);
  }
  return { alias, previousAlias: user.alias, message: user.alias === null ? 'Alias set.' : 'Alias changed.' };
}

export async function updateProfile(
  actor: UserActor,
  fields: Partial<Pick<UserRecord, 'displayName' | 'email' | 'bio'>>,
  ports: Pick<UserPorts, 'users' | 'clock'>,
) {
  const updated = await ports.users.updateProfile(actor.userId, fields, ports.clock.now());
  if (updated === null) throw new NotFoundError('Account not found.');
  return publicUser(updated);
}

/**
 * Deletes the account: it is marked deleted first (every credential fails from that moment, since
 * auth checks the account status), then its tokens are revoked. The alias stays reserved so that
 * nobody else can take over its public addresses.
 */
export async function deleteAccount(actor: UserActor, ports: UserPorts) {
  await ports.users.markDeleted(actor.userId, ports.clock.now());
  const revokedTokens = await revokeAllTokens(actor.userId, ports);
  return { userId: actor.userId, status: 'deleted' as const, revokedTokens, message: 'Account deleted.' };
}

export interface NewAccount {
  readonly alias?: string | undefined;
  readonly email?: string | undefined;
  readonly credits?: number | undefined;
  readonly isAdmin?: boolean | undefined;
  /** Identity-provider subject; becomes the user id. */
  readonly identitySubject?: string | undefined;
}

/** Creates an account with a first access token and a legacy secret key, both shown only here. */
export async function createAccount(input: NewAccount, ports: UserPorts, requestId: string | null) {
  const now = ports.clock.now();
  const secretKey = generateSecret('secretKey');
  const user: UserRecord = {
    userId: input.identitySubject ?? uuid(),
    kind: 'user',
    alias: null,
    email: input.email ?? null,
    displayName: null,
    bio: null,
    credits: 0,
    isAdmin: input.isAdmin ?? false,
    status: 'active',
    secretKeyDigest: digestSecret(secretKey),
    identitySubject: input.identitySubject ?? null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  if (!(await ports.users.create(user))) throw new ConflictError('An account with this id already exists.');
  const actor: UserActor = {
    kind: 'user',
    userId: user.userId,
    alias: null,
    isAdmin: user.isAdmin,
    via: 'user-token',
    tokenId: null,
    scope: 'full',
    roleKeys: null,
  };
  const alias = input.alias === undefined ? null : (await setAlias(actor, input.alias, ports)).alias;
  if (input.credits !== undefined && input.credits > 0) {
    await ports.credits.grant(user.userId, input.credits, { reason: 'initial grant', requestId });
  }
  const token = await issueUserToken(user.userId, 'default', null, ports);
  return { userId: user.userId, alias, token: token.token, tokenId: token.tokenId, secretKey };
}

export async function listAccounts(query: { limit: number; cursor?: string | undefined }, ports: Pick<UserPorts, 'users'>) {
  const page = await ports.users.list(query.limit, query.cursor ?? null);
  return { users: page.items.map(publicUser), count: page.items.length, nextCursor: page.nextCursor };
}

export async function grantCredits(userId: string, input: { amount: number; reason: string }, ports: UserPorts, requestId: string) {
  const user = await ports.users.get(userId);
  if (user === null) throw new NotFoundError(`User ${userId} not found.`);
  const change = { reason: input.reason, requestId };
  const entry =
    input.amount >= 0
      ? await ports.credits.grant(userId, input.amount, change)
      : await ports.credits.debit(userId, -input.amount, change).catch((error: unknown) => {
          if (error instanceof InsufficientCreditsError) {
            throw new ConflictError(`A correction of ${input.amount} would take the balance of ${error.available} below zero.`);
          }
          throw error;
        });
  return { userId, amount: entry.amount, credits: entry.balanceAfter, entryId: entry.entryId, reason: entry.reason };
}
