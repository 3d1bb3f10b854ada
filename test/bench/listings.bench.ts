import { readFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { get, interleaved, keepAliveAgent, type Target } from './http-load.ts';
import { measured, versus } from './stats.ts';

const SOURCE = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

/** The owners: a few agents, and one that ends at the per-owner limit (500) once the creates below ran. */
const FEW = 10;
const LIMIT = 500;
/** Measured creates per owner; the large owner starts at LIMIT - CREATES, so its last create fills the limit. */
const CREATES = 25;
const CREATE_BLOCKS = 5;
const LIST = { blocks: 6, perBlock: 25, concurrency: 1 };
const WARM_UP = 20;
/** Seeding is not measured: a few creates at a time fill the owners faster. */
const SEED_CONCURRENCY = 4;

const LIST_FEW = `GET /agent/list?limit=20, ${FEW} agents`;
const LIST_MANY = `GET /agent/list?limit=20, ${LIMIT} agents`;
const CREATE_FEW = `POST /agent/create, owner holds ${FEW}-${FEW + CREATES - 1}`;
const CREATE_MANY = `POST /agent/create, owner holds ${LIMIT - CREATES}-${LIMIT - 1}`;

async function createAgent(platform: TestPlatform, token: string, agentName: string): Promise<void> {
  const res = await platform.api('POST', '/agent/create', { token, body: { agentName, description: 'bench', sourceCode: SOURCE } });
  if (res.status !== 200) throw new Error(`create ${agentName}: ${res.status} ${res.text}`);
}

async function seed(platform: TestPlatform, token: string, prefix: string, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await createAgent(platform, token, `${prefix}-${i}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
}

async function timedCreate(platform: TestPlatform, token: string, agentName: string): Promise<number> {
  const startedAt = performance.now();
  await createAgent(platform, token, agentName);
  return elapsedSince(startedAt);
}

/** The page a listing answered must be full, or a fast error or empty page would pass for a fast listing. */
async function checkPage(agent: Agent, target: Target, expected: number): Promise<void> {
  const reply = await get(agent, target);
  const count = (JSON.parse(reply.body) as { data?: { agents?: unknown[] } }).data?.agents?.length;
  if (reply.status !== 200 || count !== expected) {
    throw new Error(`${target.name}: HTTP ${reply.status}, ${count} agents: ${reply.body.slice(0, 200)}`);
  }
}

/**
 * Listing and creating agents for an owner with a few agents and for one at the per-owner limit,
 * in the same run: the cost of a page and of a create (with its per-owner limit check) should
 * follow the page, not the owner's total, so both ratios should be close to 1.
 */
export const listingsBench: BenchModule = {
  name: 'listings',
  async run({ progress, defer }) {
    progress('listings: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const few = await createUser(platform, { alias: 'bench-few', credits: 10 });
    const growing = await createUser(platform, { alias: 'bench-growing', credits: 10 });
    const many = await createUser(platform, { alias: 'bench-many', credits: 10 });

    progress(`listings: seeding ${FEW} + ${FEW} + ${LIMIT - CREATES} agents`);
    await seed(platform, few.token, 'seed', FEW);
    await seed(platform, growing.token, 'seed', FEW);
    await seed(platform, many.token, 'seed', LIMIT - CREATES);

    progress('listings: creates');
    const createFew: number[] = [];
    const createMany: number[] = [];
    const perBlock = CREATES / CREATE_BLOCKS;
    for (let block = 0; block < CREATE_BLOCKS; block++) {
      const steps = [
        async () => {
          for (let i = 0; i < perBlock; i++) createFew.push(await timedCreate(platform, growing.token, `measured-${block}-${i}`));
        },
        async () => {
          for (let i = 0; i < perBlock; i++) createMany.push(await timedCreate(platform, many.token, `measured-${block}-${i}`));
        },
      ];
      for (let i = 0; i < steps.length; i++) await steps[(block + i) % steps.length]!();
    }
    const refused = await platform.api('POST', '/agent/create', {
      token: many.token,
      body: { agentName: 'one-too-many', description: 'bench', sourceCode: SOURCE },
    });
    if (refused.status !== 409) throw new Error(`the ${LIMIT + 1}th agent was not refused: ${refused.status} ${refused.text}`);

    progress('listings: listing');
    const agent = keepAliveAgent();
    defer(() => agent.destroy());
    const targets: Target[] = [
      { name: LIST_FEW, url: `${platform.url}/agent/list?limit=20`, headers: { authorization: `Bearer ${few.token}` } },
      { name: LIST_MANY, url: `${platform.url}/agent/list?limit=20`, headers: { authorization: `Bearer ${many.token}` } },
    ];
    await checkPage(agent, targets[0]!, FEW);
    await checkPage(agent, targets[1]!, 20);
    await interleaved(agent, targets, { blocks: 1, perBlock: WARM_UP, concurrency: 1 });
    const rounds = await interleaved(agent, targets, LIST);

    const listFew = measured(LIST_FEW, rounds.get(LIST_FEW)!.samples, { note: 'the page holds all 10' });
    const listMany = measured(LIST_MANY, rounds.get(LIST_MANY)!.samples, { note: 'target: within 1.2x of the 10-agent listing' });
    const few10 = measured(CREATE_FEW, createFew, { note: 'includes the source check in the runtime' });
    const many500 = measured(CREATE_MANY, createMany, { note: 'target: within 1.2x; the last one fills the limit, the next is refused (checked)' });
    return [listFew, versus(listMany, listFew), few10, versus(many500, few10)];
  },
};
