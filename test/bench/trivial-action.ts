/**
 * The trivial action several bench modules run: what is measured is everything around it.
 */
import { randomUUID } from 'node:crypto';
import type { Compute } from '../../functions/runtimes/compute.ts';
import { elapsedSince } from './harness.ts';

export const TRIVIAL_HANDLER = `def handler(event, context):
    return {"statusCode": 200, "body": {"echo": event.get("x")}}
`;

/** One run of the trivial action through the Compute port, as the platform makes it, without HTTP, auth, credits or logs; resolves with its wall time. */
export async function runTrivialAction(compute: Compute, tenantId: string): Promise<number> {
  const startedAt = performance.now();
  let ok = false;
  const invocation = {
    kind: 'action' as const,
    source: TRIVIAL_HANDLER,
    requestId: randomUUID(),
    functionName: 'bench',
    timeoutMs: 30_000,
    memoryMb: 128,
    env: { SVC_KEYS_JSON: '{}' },
    allowHosts: [],
    event: { x: '1' },
  };
  for await (const event of compute.invoke(tenantId, invocation)) {
    if (event.type === 'result' && event.statusCode === 200) ok = true;
    if (event.type === 'error') throw new Error(`compute.invoke: ${event.code} ${event.message}`);
  }
  if (!ok) throw new Error('compute.invoke gave no result');
  return elapsedSince(startedAt);
}
