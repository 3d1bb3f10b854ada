import { randomUUID } from 'node:crypto';
import type { Compute } from '../../functions/runtimes/compute.ts';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLocalCompute, type LocalCompute } from '../../functions/adapters/compute/local.ts';
import { prepareOsSandbox } from '../../functions/runtimes/os-sandbox.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { measured, versus } from './stats.ts';

/** The trivial action: what is measured is everything around it. */
const HANDLER = `def handler(event, context):
    return {"statusCode": 200, "body": "ok"}
`;

const WARM_UP = 10;
const ROUNDS = 100;
/** Each first run starts a server and its fork server (preloading boto3 and the rest): seconds each. */
const STARTS = 4;

const SANDBOXED = 'warm run, OS sandbox (bubblewrap)';
const BARE = 'warm run, no OS sandbox';
const SANDBOXED_START = 'first run of a tenant, OS sandbox';
const BARE_START = 'first run of a tenant, no OS sandbox';

/** One trivial action through the Compute port; resolves with its wall time. */
async function runOnce(compute: Compute, tenantId: string): Promise<number> {
  const startedAt = performance.now();
  let ok = false;
  const invocation = {
    kind: 'action' as const,
    source: HANDLER,
    requestId: randomUUID(),
    functionName: 'bench',
    timeoutMs: 30_000,
    memoryMb: 128,
    env: { SVC_KEYS_JSON: '{}' },
    allowHosts: ['*.amazonaws.com'],
    event: {},
  };
  for await (const event of compute.invoke(tenantId, invocation)) {
    if (event.type === 'result' && event.statusCode === 200) ok = true;
    if (event.type === 'error') throw new Error(`compute.invoke: ${event.code} ${event.message}`);
  }
  if (!ok) throw new Error('compute.invoke gave no result');
  return elapsedSince(startedAt);
}

/**
 * What the OS sandbox costs: the same local Compute adapter with bubblewrap around each tenant's
 * runtime server and without it (UNSAFE_USER_CODE=allow). Both use the Unix control socket and the
 * egress proxy's per-run credential, so the difference is the sandbox itself: warm runs (fork of
 * the sandboxed fork server) and a tenant's first run (sandbox set-up, server and fork server start).
 */
export const sandboxBench: BenchModule = {
  name: 'sandbox',
  async run({ progress, defer }) {
    const egress = createEgressProxy();
    defer(() => egress.close());
    const computes: Record<'sandboxed' | 'bare', LocalCompute> = {
      sandboxed: createLocalCompute({ sandbox: prepareOsSandbox(), egress }),
      bare: createLocalCompute({ sandbox: prepareOsSandbox({ unsafeUserCode: 'allow' }), egress }),
    };
    defer(() => computes.sandboxed.close());
    defer(() => computes.bare.close());

    progress(`sandbox: ${STARTS} first runs each`);
    const starts = { sandboxed: [] as number[], bare: [] as number[] };
    for (let i = 0; i < STARTS; i++) {
      const order = i % 2 === 0 ? (['sandboxed', 'bare'] as const) : (['bare', 'sandboxed'] as const);
      for (const kind of order) starts[kind].push(await runOnce(computes[kind], `start-${kind}-${i}`));
    }

    progress('sandbox: warm-up');
    for (let i = 0; i < WARM_UP; i++) {
      await runOnce(computes.sandboxed, 'warm');
      await runOnce(computes.bare, 'warm');
    }
    progress(`sandbox: ${ROUNDS} warm runs each, interleaved`);
    const warm = { sandboxed: [] as number[], bare: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? (['sandboxed', 'bare'] as const) : (['bare', 'sandboxed'] as const);
      for (const kind of order) warm[kind].push(await runOnce(computes[kind], 'warm'));
    }

    const bare = measured(BARE, warm.bare, { note: 'compute.invoke of a trivial action, fork-only isolation (UNSAFE_USER_CODE=allow)' });
    const bareStart = measured(BARE_START, starts.bare, { note: 'a new tenant: server and fork server start, preloads, first run' });
    return [
      bare,
      versus(measured(SANDBOXED, warm.sandboxed, { note: 'the same inside bubblewrap: own namespaces, uid, read-only filesystem' }), bare),
      bareStart,
      versus(measured(SANDBOXED_START, starts.sandboxed, { note: 'the same with the sandbox set up first' }), bareStart),
    ];
  },
};
