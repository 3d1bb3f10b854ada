import { Agent, request, type Server } from 'node:http';
import { elapsedSince } from './harness.ts';

/** One endpoint to load, with the headers every request to it carries. */
export interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Reply {
  readonly status: number;
  readonly body: string;
}

export interface Round {
  /** Per-request latency, from before `request()` to the end of the response body. */
  readonly samples: number[];
  /** Wall time of the round(s), for throughput. */
  readonly wallMs: number;
}

/**
 * Keep-alive so that every target pays for connection setup once, in the warm-up, and the figures
 * are request handling only — as behind a real client or load balancer.
 */
export function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true });
}

/** Stops a bare server the bench started, its keep-alive connections too (they would hold `close` open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export function get(agent: Agent, target: Target): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: 'GET', agent, headers: target.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function timedGet(agent: Agent, target: Target): Promise<number> {
  const startedAt = performance.now();
  const reply = await get(agent, target);
  const ms = elapsedSince(startedAt);
  // A fast error page must not pass for a fast answer.
  if (reply.status !== 200) throw new Error(`${target.name}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  return ms;
}

/** `count` requests, each one after the previous answered, from up to `concurrency` callers at once. */
export function load(agent: Agent, target: Target, count: number, concurrency = 1): Promise<Round> {
  return concurrently(count, concurrency, () => timedGet(agent, target));
}

/**
 * `count` operations from `concurrency` callers, each starting its next as soon as its last one
 * finished (a closed loop, as a pool of clients behaves). `once` resolves with its latency in ms.
 */
export async function concurrently(count: number, concurrency: number, once: () => Promise<number>): Promise<Round> {
  const samples: number[] = [];
  let issued = 0;
  const caller = async () => {
    while (issued < count) {
      issued += 1;
      samples.push(await once());
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, caller));
  return { samples, wallMs: elapsedSince(startedAt) };
}

/**
 * Loads every target in `blocks` alternating blocks, rotating which goes first, so drift over the
 * run (GC, store compaction, CPU frequency, the other core's load) falls on all targets alike and
 * their ratio stays meaningful.
 */
export async function interleaved(
  agent: Agent,
  targets: readonly Target[],
  options: { blocks: number; perBlock: number; concurrency: number },
): Promise<Map<string, Round>> {
  const rounds = new Map<string, Round>(targets.map((t) => [t.name, { samples: [], wallMs: 0 }]));
  for (let block = 0; block < options.blocks; block++) {
    for (let i = 0; i < targets.length; i++) {
      const target = targets[(block + i) % targets.length]!;
      const round = await load(agent, target, options.perBlock, options.concurrency);
      const total = rounds.get(target.name)!;
      rounds.set(target.name, { samples: total.samples.concat(round.samples), wallMs: total.wallMs + round.wallMs });
    }
  }
  return rounds;
}

export function perSecond(round: Round): number {
  return (round.samples.length * 1000) / round.wallMs;
}
