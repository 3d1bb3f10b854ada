/**
 * Per-caller admission (functions/core/admission.ts) and who a request counts against
 * (functions/core/admission-keys.ts), on a clock moved by hand.
 */
import { describe, expect, it } from 'vitest';
import { createAdmission, type AdmissionLimits, type Release } from '../../functions/core/admission.ts';
import { accountKey, presentedKey } from '../../functions/core/admission-keys.ts';
import { anonymous, type UserActor } from '../../functions/core/auth/actor.ts';
import type { Config } from '../../functions/core/config.ts';
import { RateLimitedError } from '../../functions/core/errors.ts';
import type { HttpRequest } from '../../functions/core/http/request.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { manualTimers } from '../support/manual-timers.ts';

const LIMITS: AdmissionLimits = { concurrency: 2, maxWaitMs: 25, maxQueued: 2, setting: 'TENANT_CONCURRENCY' };

/** What a promise has come to once pending callbacks have run: its value, its error, or still pending. */
async function outcome<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown; pending?: true }> {
  const state: { value?: T; error?: unknown; pending?: true } = { pending: true };
  promise.then(
    (value) => Object.assign(state, { value, pending: undefined }),
    (error: unknown) => Object.assign(state, { error, pending: undefined }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return { ...state };
}

describe('admission', () => {
  it('admits up to the concurrency at once and refuses past the queue without waiting', async () => {
    // Prepare
    const { timers } = manualTimers();
    const admission = createAdmission(timers);

    // Act
    const held = [await admission.admit('a', LIMITS), await admission.admit('a', LIMITS)];
    const waiting = [admission.admit('a', LIMITS), admission.admit('a', LIMITS)];
    const refused = await outcome(admission.admit('a', LIMITS));

    // Assess
    expect(held).toHaveLength(2);
    expect(await outcome(waiting[0]!)).toMatchObject({ pending: true });
    expect(refused.error).toBeInstanceOf(RateLimitedError);
    expect(refused.error).toMatchObject({ retryAfterSec: 1, code: 'CONCURRENCY_LIMITED' });
    expect((refused.error as Error).message).toContain('at most 2 at once per caller (TENANT_CONCURRENCY)');
    expect(admission.snapshot().get('a')).toEqual({ active: 2, queued: 2 });
  });

  it('hands a released slot to the first waiter, in arrival order', async () => {
    // Prepare
    const { timers } = manualTimers();
    const admission = createAdmission(timers);
    const first = await admission.admit('a', LIMITS);
    await admission.admit('a', LIMITS);
    const order: string[] = [];
    void admission.admit('a', LIMITS).then(() => order.push('third'));
    void admission.admit('a', LIMITS).then(() => order.push('fourth'));

    // Act
    first();
    first();
    await outcome(Promise.resolve());

    // Assess: one release, one hand-over; releasing twice frees nothing more.
    expect(order).toEqual(['third']);
    expect(admission.snapshot().get('a')).toEqual({ active: 2, queued: 1 });
  });

  it('refuses a waiter when its wait is up, and not before', async () => {
    // Prepare
    const { timers, advanceTo } = manualTimers();
    const admission = createAdmission(timers);
    await admission.admit('a', LIMITS);
    await admission.admit('a', LIMITS);
    const waiting = admission.admit('a', LIMITS);

    // Act
    await advanceTo(24);
    const before = await outcome(waiting);
    await advanceTo(25);
    const after = await outcome(waiting);

    // Assess
    expect(before).toMatchObject({ pending: true });
    expect(after.error).toBeInstanceOf(RateLimitedError);
    expect(admission.snapshot().get('a')).toEqual({ active: 2, queued: 0 });
  });

  it('keeps each key to its own share, and forgets a key once it is idle', async () => {
    // Prepare
    const { timers } = manualTimers();
    const admission = createAdmission(timers);
    const loud: Release[] = [await admission.admit('loud', LIMITS), await admission.admit('loud', LIMITS)];
    void admission.admit('loud', LIMITS).catch(() => undefined);
    void admission.admit('loud', LIMITS).catch(() => undefined);

    // Act
    const quiet = await outcome(admission.admit('quiet', LIMITS));
    quiet.value!();

    // Assess
    expect(quiet.value).toBeTypeOf('function');
    expect(admission.snapshot().has('quiet')).toBe(false);
    expect(loud).toHaveLength(2);
  });

  it('admits everything when the concurrency is 0, and refuses at once when the wait is 0', async () => {
    // Prepare
    const { timers } = manualTimers();
    const admission = createAdmission(timers);
    const noWait = { ...LIMITS, concurrency: 1, maxWaitMs: 0 };
    await admission.admit('b', noWait);

    // Act
    const unlimited = await Promise.all(Array.from({ length: 50 }, () => admission.admit('a', { ...LIMITS, concurrency: 0 })));
    const refused = await outcome(admission.admit('b', noWait));

    // Assess
    expect(unlimited).toHaveLength(50);
    expect(admission.snapshot().has('a')).toBe(false);
    expect(refused.error).toBeInstanceOf(RateLimitedError);
  });
});

describe('admission keys', () => {
  const config = { TENANT_CONCURRENCY: 16, ANONYMOUS_CONCURRENCY: 8, ADMISSION_WAIT_MS: 25 } as Config;
  const route = (auth: RouteSpec['auth']) => ({ auth }) as RouteSpec;
  const request = (headers: Record<string, string>, pathParams: Record<string, string> = {}) =>
    ({ headers, query: {}, pathParams, sourceIp: '203.0.113.7' }) as unknown as HttpRequest;

  it('counts a presented credential by its digest, and a request without one by its address', () => {
    // Act
    const withToken = presentedKey(route('required'), 'actions', request({ authorization: 'Bearer svc_ut_secret' }), config);
    const without = presentedKey(route('optional'), 'actions', request({}), config);

    // Assess
    expect(withToken?.key).toMatch(/^credential:[0-9a-f]{64}$/);
    expect(withToken?.key).not.toContain('svc_ut_secret');
    expect(withToken?.limits).toMatchObject({ concurrency: 16, setting: 'TENANT_CONCURRENCY' });
    expect(without).toMatchObject({ key: 'address:203.0.113.7', limits: { concurrency: 8, setting: 'ANONYMOUS_CONCURRENCY' } });
  });

  it('counts a public route by address and addressed resource, whatever credential it carries', () => {
    // Act
    const inbound = presentedKey(route('public'), 'channels', request({ authorization: 'Bearer x' }, { channelId: 'ch1', platform: 'telegram' }), config);
    const site = presentedKey(route('public'), 'websites', request({}, { site: 'alice/index.html' }), config);

    // Assess
    expect(inbound?.key).toBe('address:203.0.113.7:ch1');
    expect(site?.key).toBe('address:203.0.113.7:alice');
  });

  it("never counts the platform's own endpoints", () => {
    // Act
    const health = presentedKey(route('public'), 'discovery', request({ authorization: 'Bearer x' }), config);

    // Assess
    expect(health).toBeNull();
  });

  it('counts an account once it is known, except anonymous callers and runs', () => {
    // Prepare
    const user = { kind: 'user', userId: 'u1', via: 'user-token' } as UserActor;

    // Act
    const keys = [accountKey(user, config), accountKey({ ...user, via: 'run-token' }, config), accountKey(anonymous, config)];

    // Assess
    expect(keys).toEqual([{ key: 'user:u1', limits: expect.objectContaining({ concurrency: 16 }) }, null, null]);
  });
});
