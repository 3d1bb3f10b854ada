/**
 * Who a request counts against, for admission (admission.ts). Two keys, so that a refusal costs no
 * store call and a caller's share cannot be multiplied:
 *
 * - before authentication, from the request alone: the credential it presents (only its holder can
 *   present it, so nobody can spend another's share), or, with none, the client address;
 * - after authentication, the account: a user with several tokens still has one share.
 *
 * The platform's own endpoints (health and discovery) are never counted: a load balancer or an
 * operator must reach them whatever the tenants do.
 */
import type { RouteSpec } from '../../lib/manifest/types.ts';
import type { Actor } from './auth/actor.ts';
import { digestSecret } from './auth/secrets.ts';
import type { AdmissionLimits } from './admission.ts';
import type { Config } from './config.ts';
import type { HttpRequest } from './http/request.ts';

/** Areas whose routes are the platform's own, answered without admission. */
export const UNCOUNTED_AREAS: ReadonlySet<string> = new Set(['discovery']);

export interface AdmissionKey {
  readonly key: string;
  readonly limits: AdmissionLimits;
}

export function tenantLimits(config: Pick<Config, 'TENANT_CONCURRENCY' | 'ADMISSION_WAIT_MS'>): AdmissionLimits {
  return { concurrency: config.TENANT_CONCURRENCY, maxWaitMs: config.ADMISSION_WAIT_MS, maxQueued: config.TENANT_CONCURRENCY, setting: 'TENANT_CONCURRENCY' };
}

export function anonymousLimits(config: Pick<Config, 'ANONYMOUS_CONCURRENCY' | 'ADMISSION_WAIT_MS'>): AdmissionLimits {
  return {
    concurrency: config.ANONYMOUS_CONCURRENCY,
    maxWaitMs: config.ADMISSION_WAIT_MS,
    maxQueued: config.ANONYMOUS_CONCURRENCY,
    setting: 'ANONYMOUS_CONCURRENCY',
  };
}

/**
 * The key a request counts against before anything is looked up; null for the platform's own routes.
 * A public route ignores credentials, so it is keyed by address, and by the first path parameter's
 * first segment (a channel, a site's alias): many tenants' webhooks arrive from one messaging
 * service's addresses, and one tenant's busy channel must not refuse another's.
 */
export function presentedKey(route: RouteSpec, areaName: string, request: HttpRequest, config: Config): AdmissionKey | null {
  if (UNCOUNTED_AREAS.has(areaName)) return null;
  if (route.auth !== 'public') {
    const credential = presentedCredential(request);
    // Digested, so that no secret is kept in the admission's table.
    if (credential !== null) return { key: `credential:${digestSecret(credential)}`, limits: tenantLimits(config) };
  }
  const first = Object.values(request.pathParams)[0];
  const resource = route.auth === 'public' && first !== undefined ? `:${first.split('/')[0]}` : '';
  return { key: `address:${request.sourceIp}${resource}`, limits: anonymousLimits(config) };
}

/**
 * The account's key once the caller is known; null when the first key already is the caller's
 * whole share: anonymous callers, and runs (a run token is one run of an already admitted request,
 * whose calls back must not wait behind its owner's other requests, nor be refused by them).
 */
export function accountKey(actor: Actor, config: Config): AdmissionKey | null {
  if (actor.kind !== 'user' || actor.via === 'run-token') return null;
  return { key: `user:${actor.userId}`, limits: tenantLimits(config) };
}

/** The credential as presented, in the places resolve-actor.ts reads it; null when there is none. */
function presentedCredential(request: HttpRequest): string | null {
  const authorization = request.headers['authorization'];
  if (authorization !== undefined) return authorization;
  const secret = request.headers['x-svc-secretkey'] ?? request.query['secretServiceKey'];
  return secret ?? null;
}
