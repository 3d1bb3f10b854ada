/**
 * Per-tenant admission over real HTTP against the local platform (functions/core/admission.ts):
 * a tenant over its share is refused with 429 and Retry-After without its requests queueing,
 * while another tenant's requests and the platform's own endpoints are served.
 *
 * The loud tenant's runs are held at the Compute port (the real runtime, entered only once the
 * test opens the gate), so "in progress" is a state the test controls rather than a race.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Compute } from '../../functions/runtimes/compute.ts';
import { createUser, type ApiResponse, type TestPlatform, startTestPlatform } from '../support/local-platform.ts';
import { deferred } from '../support/deferred.ts';

const ECHO = `def handler(event, context):
    return {"statusCode": 200, "body": {"echo": event.get("x")}}
`;
const SHARE = 2;

interface Tenant {
  readonly userId: string;
  readonly token: string;
  readonly actionId: string;
}

/** A Compute whose runs for `tenantId` wait for `gate` before they start; it counts the runs that arrived. */
function gatedCompute(
  inner: Compute,
  tenantId: string,
  gate: Promise<void>,
): { compute: Compute; arrived: () => number; arrival: (n: number) => Promise<void> } {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const compute: Compute = Object.create(inner) as Compute;
  compute.invoke = async function* (tenant, invocation, signal) {
    if (tenant === tenantId) {
      count++;
      for (const waiter of waiters.filter((w) => w.n <= count)) waiter.resolve();
      await gate;
    }
    yield* inner.invoke(tenant, invocation, signal);
  };
  return {
    compute,
    arrived: () => count,
    arrival: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
  };
}

describe('fair share: per-tenant admission', () => {
  let platform: TestPlatform;
  let loud: Tenant;
  let quiet: Tenant;

  const run = (tenant: Tenant, token = tenant.token) => platform.api('GET', `/action/${tenant.actionId}?x=1`, { token });

  async function tenant(alias: string): Promise<Tenant> {
    const user = await createUser(platform, { alias, credits: 1000 });
    const created = await platform.api('POST', '/action/create', {
      token: user.token,
      body: { actionName: 'Echo', description: 'for tests', runtime: 'python3.12', sourceCode: ECHO, category: 'testing', status: 'active' },
    });
    if (created.status !== 200) throw new Error(`create: ${created.status} ${created.text}`);
    return { userId: user.userId, token: user.token, actionId: created.body.data.actionId as string };
  }

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { TENANT_CONCURRENCY: String(SHARE), ANONYMOUS_CONCURRENCY: String(SHARE) } });
    loud = await tenant('loudtenant');
    quiet = await tenant('quiettenant');
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it('refuses a tenant over its share with 429 and Retry-After while another tenant and /health are served', async () => {
    // Prepare: the loud tenant's share is taken by runs held in progress.
    const ports = platform.running.ports as { compute: Compute };
    const original = ports.compute;
    const gate = deferred();
    const gated = gatedCompute(original, loud.userId, gate.promise);
    ports.compute = gated.compute;
    let refused: ApiResponse[];
    let others: ApiResponse[];
    let held: ApiResponse[];
    try {
      const holding = Array.from({ length: SHARE }, () => run(loud));
      await gated.arrival(SHARE);

      // Act
      refused = await Promise.all(Array.from({ length: SHARE * 2 + 1 }, () => run(loud)));
      others = [await run(quiet), await platform.api('GET', '/health'), await platform.api('GET', '/.well-known/platform.json')];
      gate.resolve();
      held = await Promise.all(holding);
    } finally {
      ports.compute = original;
    }

    // Assess
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body).toMatchObject({ success: false, error: { code: 'CONCURRENCY_LIMITED' } });
      expect(res.body.error.message).toContain(`at most ${SHARE} at once per caller (TENANT_CONCURRENCY)`);
    }
    // None of the refused requests reached the runtime.
    expect(gated.arrived()).toBe(SHARE);
    expect(others.map((res) => res.status)).toEqual([200, 200, 200]);
    expect(others[0]!.body.data.body).toEqual({ echo: '1' });
    expect(held.map((res) => res.status)).toEqual(Array(SHARE).fill(200));
  });

  it('counts the account, not the token: a second token of a tenant over its share is refused too', async () => {
    // Prepare
    const second = await platform.api('POST', '/user/token/create', { token: loud.token, body: { name: 'second', expiresInDays: 1 } });
    expect(second.status).toBe(200);
    const ports = platform.running.ports as { compute: Compute };
    const original = ports.compute;
    const gate = deferred();
    const gated = gatedCompute(original, loud.userId, gate.promise);
    ports.compute = gated.compute;
    let other: ApiResponse;
    let held: ApiResponse[];
    try {
      const holding = Array.from({ length: SHARE }, () => run(loud));
      await gated.arrival(SHARE);

      // Act
      other = await run(loud, second.body.data.token as string);
      gate.resolve();
      held = await Promise.all(holding);
    } finally {
      ports.compute = original;
    }

    // Assess
    expect(other.status).toBe(429);
    expect(other.body.error.code).toBe('CONCURRENCY_LIMITED');
    expect(held.map((res) => res.status)).toEqual(Array(SHARE).fill(200));
  });

  it('gives the share back once the requests in progress end', async () => {
    // Act: more requests than the share, one after another.
    const statuses: number[] = [];
    for (let i = 0; i < SHARE * 3; i++) statuses.push((await run(loud)).status);

    // Assess
    expect(statuses).toEqual(Array(SHARE * 3).fill(200));
  });
});
