import type { CallerScope } from '../../../lib/manifest/specs.ts';
import { AccessDeniedError, AliasRequiredError, AuthenticationRequiredError } from '../errors.ts';
import type { AccountCredential } from './credentials.ts';

/**
 * How the caller proved who they are; `platform` proved nothing: the platform runs the owner's
 * agent on its own behalf (cron jobs, channels: functions/agents/agent-runs.ts).
 */
export type CredentialKind = 'user-token' | 'role-token' | 'secret-key' | 'identity-provider' | 'run-token' | 'platform';

/** An authenticated account, carried in the request context instead of loose user ids. */
export interface UserActor {
  readonly kind: 'user';
  readonly userId: string;
  readonly alias: string | null;
  readonly isAdmin: boolean;
  readonly via: CredentialKind;
  /** Token used, when the credential was a token. */
  readonly tokenId: string | null;
  /**
   * `full` may do everything the account may; `role` (role tokens) may run and read resources but
   * not manage tokens, keys or the account, and runs receive only `roleKeys` (all of the owner's
   * keys when null: run tokens minted for the owner's own runs).
   */
  readonly scope: 'full' | 'role';
  readonly roleKeys: readonly string[] | null;
  /**
   * Set on agent-scoped run tokens (embed visitors, phone calls): the only agents this caller may
   * chat with. Such callers are admitted only on routes declared `callers: 'agent'`.
   */
  readonly agents?: readonly string[];
  /** Set when the agent-scoped token came from an embed token: chats and calls check that embed first. */
  readonly embedTokenId?: string;
  /**
   * The embed visitor (one browser) the credential was issued to, with `embedTokenId`: it may
   * continue only the conversations it started, not another visitor's nor the owner's.
   */
  readonly visitorId?: string;
  /**
   * The account as auth read it at the start of this request (strongly consistent), so services
   * can answer from that read instead of repeating it. Absent on actors made elsewhere (tests,
   * the platform's own callers): they read the account themselves.
   */
  readonly account?: AccountCredential;
}

export interface AnonymousActor {
  readonly kind: 'anonymous';
}

export type Actor = UserActor | AnonymousActor;

export const anonymous: AnonymousActor = Object.freeze({ kind: 'anonymous' });

/** The caller as a user; anonymous callers get 401. */
export function requireUser(actor: Actor): UserActor {
  if (actor.kind !== 'user') throw new AuthenticationRequiredError();
  return actor;
}

/**
 * The manifest's `callers` rule, applied by the pipeline to every route before its handler runs:
 * role-scoped credentials (role tokens, run tokens) are refused on `full` routes. Anonymous callers
 * pass; the route's auth mode has already decided about them.
 */
export function assertCallerAdmitted(callers: CallerScope, actor: Actor): void {
  if (actor.kind === 'user' && actor.agents !== undefined && callers !== 'agent') {
    throw new AccessDeniedError('This credential can only chat with the agents it was issued for.');
  }
  if (callers === 'full' && actor.kind === 'user' && actor.scope !== 'full') {
    throw new AccessDeniedError('Role tokens can run and read; they cannot create, change or delete resources, or manage tokens, keys or the account.');
  }
}

/** For services that run an agent: an agent-scoped caller may only reach the agents it was issued for. */
export function assertAgentInScope(actor: UserActor, agentId: string): void {
  if (actor.agents !== undefined && !actor.agents.includes(agentId)) {
    throw new AccessDeniedError('This credential can only chat with the agents it was issued for.');
  }
}

/** For account and credential management: role tokens are refused (again, should a route be misdeclared). */
export function requireFullAccess(actor: Actor): UserActor {
  const user = requireUser(actor);
  if (user.scope !== 'full') throw new AccessDeniedError('Role tokens cannot manage tokens, keys or the account.');
  return user;
}

/** Shared guard for every create endpoint: accounts need an alias before they own resources. */
export function requireAlias(actor: Actor): UserActor & { readonly alias: string } {
  const user = requireUser(actor);
  if (user.alias === null) throw new AliasRequiredError();
  return user as UserActor & { readonly alias: string };
}
