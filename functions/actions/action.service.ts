import type { PublicUrls } from '../core/http/public-urls.ts';
import { requireAlias, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { AccessDeniedError, ConflictError, NotFoundError } from '../core/errors.ts';
import { randomBase62 } from '../core/ids.ts';
import type { Compute } from '../runtimes/compute.ts';
import { checkSource } from '../runtimes/source-check.ts';
import type { UserStore } from '../users/user.store.ts';
import type { ActionParameter, ActionRecord, ActionStatus } from './action.schema.ts';
import { MAX_ACTIONS_PER_OWNER, type ActionFilter, type ActionStore } from './action.store.ts';

export interface ActionPorts {
  readonly actions: ActionStore;
  readonly users: UserStore;
  readonly compute: Compute;
  readonly clock: Clock;
  readonly config: Config;
}

/** Where actions run: `{base_url}/action/{actionId}` (the one-click URL) and its direct variant. */
export function actionUrls(urls: PublicUrls, actionId: string) {
  const { baseUrl } = urls;
  return { oneClickUrl: `${baseUrl}/action/${actionId}`, directUrl: `${baseUrl}/action/python-128mb/${actionId}` };
}

/** How an action is shown; `sourceCode` only in the full record (`/action/info/{actionId}`). */
export function presentAction(action: ActionRecord, ownerAlias: string | null, urls: PublicUrls, ports: Pick<ActionPorts, 'config'>, withSource: boolean) {
  return {
    actionId: action.actionId,
    actionName: action.actionName,
    description: action.description,
    runtime: action.runtime,
    category: action.category,
    visibility: action.visibility,
    status: action.status,
    memoryMb: action.memoryMb,
    timeoutSec: action.timeoutSec,
    tags: action.tags,
    parameters: action.parameters,
    keysNeeded: action.keysNeeded,
    owner: ownerAlias,
    ...actionUrls(urls, action.actionId),
    createdAt: action.createdAt,
    updatedAt: action.updatedAt,
    ...(withSource ? { sourceCode: action.sourceCode } : {}),
  };
}

/** The action, or 404 ACTION_NOT_FOUND. */
export async function loadAction(actionId: string, ports: Pick<ActionPorts, 'actions'>): Promise<ActionRecord> {
  const action = await ports.actions.get(actionId);
  if (action === null) throw new NotFoundError(`Action ${actionId} not found.`, 'ACTION_NOT_FOUND');
  return action;
}

export function isOwner(actor: Actor, action: Pick<ActionRecord, 'ownerId'>): actor is UserActor {
  return actor.kind === 'user' && actor.userId === action.ownerId;
}

/**
 * Who may see and run an action: its owner, in any status; anyone else only a public action out of
 * development (deprecated ones still run, and say so). Private: 403; public in development: 403.
 */
export function assertCanUse(actor: Actor, action: ActionRecord): void {
  if (isOwner(actor, action)) return;
  if (action.visibility !== 'public') throw new AccessDeniedError(`Action ${action.actionId} is private.`);
  if (action.status === 'development') throw new AccessDeniedError(`Action ${action.actionId} is in development; only its owner may use it.`);
}

function assertOwner(actor: UserActor, action: ActionRecord): void {
  if (actor.userId !== action.ownerId) throw new AccessDeniedError(`Only the owner may change action ${action.actionId}.`);
}

/** `act-` and 16 random base62 characters (95 bits). */
export function newActionId(): string {
  return `act-${randomBase62(16)}`;
}

export interface CreateActionInput {
  actionId?: string | undefined;
  actionName: string;
  description: string;
  runtime: 'python3.12';
  sourceCode: string;
  category: string;
  visibility: 'private' | 'public';
  status: ActionStatus;
  memoryMb: number;
  timeoutSec: number;
  tags: string[];
  parameters: ActionParameter[];
  keysNeeded: string[];
}

export async function createAction(actor: Actor, input: CreateActionInput, ports: ActionPorts) {
  const owner = requireAlias(actor);
  await checkSource(ports.compute, input.sourceCode);
  const now = ports.clock.now();
  const action: ActionRecord = {
    actionId: input.actionId ?? newActionId(),
    ownerId: owner.userId,
    actionName: input.actionName,
    nameLower: input.actionName.toLowerCase(),
    description: input.description,
    runtime: input.runtime,
    sourceCode: input.sourceCode,
    category: input.category,
    visibility: input.visibility,
    status: input.status,
    memoryMb: input.memoryMb,
    timeoutSec: input.timeoutSec,
    tags: input.tags,
    parameters: input.parameters,
    keysNeeded: input.keysNeeded,
    createdAt: now,
    updatedAt: now,
  };
  // The store enforces the per-owner limit with the create itself, so concurrent creates cannot pass it.
  const created = await ports.actions.create(action);
  if (created === 'limit') throw new ConflictError(`An account may own at most ${MAX_ACTIONS_PER_OWNER} actions.`);
  if (created === 'taken') throw new ConflictError(`Action id ${action.actionId} is already taken.`);
  return { actionId: action.actionId, message: `Action ${action.actionName} created.` };
}

export interface ListActionsQuery {
  visibility: 'all' | 'public' | 'private';
  status?: ActionStatus | undefined;
  category?: string | undefined;
  runtime?: 'python' | 'nodejs' | undefined;
  nameContains?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * Listing rules, as for agents: anonymous callers and `visibility=public` list public actions that
 * anyone may run (active and deprecated, every owner's); signed-in callers list their own with
 * `all` (default) and `private`, in every status. Filters narrow either listing.
 */
export async function listActions(actor: Actor, query: ListActionsQuery, ports: ActionPorts, urls: PublicUrls) {
  const filter: ActionFilter = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.category ? { category: query.category } : {}),
    ...(query.runtime ? { runtimePrefix: query.runtime } : {}),
    ...(query.nameContains ? { nameContains: query.nameContains } : {}),
  };
  const publicListing = actor.kind === 'anonymous' || query.visibility === 'public';
  const page = publicListing
    ? query.status === 'development'
      ? { items: [], nextCursor: null }
      : await ports.actions.listPublic(filter, query.limit, query.cursor)
    : await ports.actions.listByOwner(
        actor.userId,
        { ...filter, ...(query.visibility === 'private' ? { visibility: 'private' as const } : {}) },
        query.limit,
        query.cursor,
      );
  const aliases = await aliasesOf(
    page.items.map((a) => a.ownerId),
    ports,
  );
  const actions = page.items.map((a) => presentAction(a, aliases.get(a.ownerId) ?? null, urls, ports, false));
  return { actions, count: actions.length, nextCursor: page.nextCursor };
}

async function aliasesOf(ownerIds: string[], ports: Pick<ActionPorts, 'users'>): Promise<Map<string, string | null>> {
  const unique = [...new Set(ownerIds)];
  const users = await Promise.all(unique.map((id) => ports.users.get(id)));
  return new Map(unique.map((id, i) => [id, users[i]?.alias ?? null]));
}

/** The full record, source included, for whoever may use the action. */
export async function getActionInfo(actor: Actor, actionId: string, ports: ActionPorts, urls: PublicUrls) {
  const action = await loadAction(actionId, ports);
  assertCanUse(actor, action);
  const alias = (await ports.users.get(action.ownerId))?.alias ?? null;
  return presentAction(action, alias, urls, ports, true);
}

export type UpdateActionInput = { actionId: string } & { [K in keyof Omit<CreateActionInput, 'actionId'>]?: CreateActionInput[K] | undefined };

/** Only supplied fields change; a new source is checked again. */
export async function updateAction(actor: UserActor, input: UpdateActionInput, ports: ActionPorts, urls: PublicUrls) {
  const action = await loadAction(input.actionId, ports);
  assertOwner(actor, action);
  if (input.sourceCode !== undefined && input.sourceCode !== action.sourceCode) await checkSource(ports.compute, input.sourceCode);
  const { actionId: _id, ...fields } = input;
  const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<ActionRecord>;
  const withName = changes.actionName !== undefined ? { ...changes, nameLower: changes.actionName.toLowerCase() } : changes;
  const updated = await ports.actions.update(action, withName, ports.clock.now());
  if (updated === 'changed') throw new ConflictError(`Action ${action.actionId} changed while updating; retry.`);
  return { actionId: updated.actionId, message: 'Action updated.', action: presentAction(updated, actor.alias, urls, ports, false) };
}

/** Removes the action for good (actions have no deleted state); its id may be used again. */
export async function deleteAction(actor: UserActor, actionId: string, ports: ActionPorts) {
  const action = await loadAction(actionId, ports);
  assertOwner(actor, action);
  const deleted = await ports.actions.delete(actionId, actor.userId);
  if (deleted === 'busy') throw new ConflictError(`Action ${actionId} is being changed right now; retry.`);
  if (!deleted) throw new NotFoundError(`Action ${actionId} not found.`, 'ACTION_NOT_FOUND');
  return { actionId, message: 'Action deleted.' };
}
