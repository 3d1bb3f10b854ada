/**
 * A closed-loop load in a process of its own, so that its callbacks never delay the probes of the
 * bench that started it (a refused request comes back at once, and a single process answering
 * hundreds of them a second would measure its own event loop, not the platform's):
 * `node --import tsx test/bench/load-child.ts '{"url","headers","concurrency"}'`. Prints `started`
 * as its callers start, loads until stdin ends, then prints one JSON line: the latencies of the 200
 * and of the 429 answers, and the wall time.
 */
import { z } from 'zod';
import { get, keepAliveAgent } from './http-load.ts';
import { elapsedSince } from './harness.ts';

const options = z
  .object({ url: z.url(), headers: z.record(z.string(), z.string()), concurrency: z.number().int().positive() })
  .parse(JSON.parse(process.argv[2] ?? '{}'));

const agent = keepAliveAgent();
const target = { name: 'load', url: options.url, headers: options.headers };
const served: number[] = [];
const refused: number[] = [];
let done = false;
process.stdin.resume();
process.stdin.once('end', () => (done = true));

process.stdout.write('started\n');
const startedAt = performance.now();
const caller = async () => {
  while (!done) {
    const sentAt = performance.now();
    const reply = await get(agent, target);
    const ms = elapsedSince(sentAt);
    if (reply.status === 200) served.push(ms);
    else if (reply.status === 429) refused.push(ms);
    else throw new Error(`load: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }
};
await Promise.all(Array.from({ length: options.concurrency }, caller));
process.stdout.write(`${JSON.stringify({ served, refused, wallMs: elapsedSince(startedAt) })}\n`);
agent.destroy();
