import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { publicUrls } from '../../functions/core/http/public-urls.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../functions/agents/agent.service.ts';
import { createAgentStore } from '../../functions/agents/agent.store.ts';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import type { Db } from '../../functions/core/db/dynamo.ts';
import { STALE_CLAIM_MS } from '../../functions/core/db/unique-claim.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import type { Ports } from '../../functions/ports.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const SOURCE = 'def create_agent():\n    return "twin"\n';

function agentInput(agentName: string) {
  return {
    agentName,
    description: 'race test',
    sourceCode: SOURCE,
    visibility: 'private' as const,
    sourceVisibility: 'visible' as const,
    runtime: 'python3.12' as const,
    memoryMb: 128,
    timeoutSec: 30,
    agentType: 'text' as const,
  };
}

/**
 * The real database, except that the first record write to `agents` waits until the test lets it
 * go: what a slow network, a throttled table or a paused Lambda does to a create between its name
 * claim and its record.
 */
function holdFirstAgentWrite(db: Db) {
  let signalHeld!: () => void;
  const held = new Promise<void>((resolve) => (signalHeld = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const agents = db.table('agents');
  let holding = true;
  const doc = new Proxy(db.doc, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver) as unknown;
      return async (command: Parameters<Db['doc']['send']>[0]) => {
        if (holding && command instanceof PutCommand && command.input.TableName === agents) {
          holding = false;
          signalHeld();
          await released;
        }
        return target.send(command);
      };
    },
  });
  return { db: { doc, table: (name) => db.table(name) } satisfies Db, held, release };
}

async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('agent names: concurrent creates and leftover claims', () => {
  let platform: TestPlatform;
  let ports: Ports;
  let actor: UserActor;

  beforeAll(async () => {
    platform = await startTestPlatform();
    ports = platform.running.ports;
    const owner = await createUser(platform, { alias: 'racer' });
    actor = { kind: 'user', userId: owner.userId, alias: 'racer', isAdmin: false, via: 'user-token', tokenId: owner.tokenId, scope: 'full', roleKeys: null };
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('lets exactly one of two creates of one name succeed while the first one is still writing its record', async () => {
    // Prepare
    const gate = holdFirstAgentWrite(ports.db);
    const racing = { ...ports, agents: createAgentStore(gate.db) };
    // Act
    const first = settle(createAgent(actor, agentInput('twin'), racing, publicUrls(ports.config, platform.url)));
    await gate.held;
    const second = await settle(createAgent(actor, agentInput('twin'), racing, publicUrls(ports.config, platform.url)));
    gate.release();
    const results = [await first, second];
    const plainDuplicate = await settle(createAgent(actor, agentInput('twin'), ports, publicUrls(ports.config, platform.url)));
    // Assess
    const created = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const refusal = toErrorResponse(refused[0]!.ok ? null : refused[0]!.error);
    expect(refusal).toMatchObject({ status: 409, code: 'CONFLICT', message: 'You already have an agent named "twin".' });
    expect(plainDuplicate.ok ? null : toErrorResponse(plainDuplicate.error)).toEqual(refusal);
    const twins = (await ports.agents.listByOwner(actor.userId, { status: 'active' }, { limit: 100 })).items.filter((agent) => agent.agentName === 'twin');
    expect(twins).toHaveLength(1);
  });

  it('repairs a name claim left by a create that crashed before writing its agent, once the claim is stale', async () => {
    // Prepare
    const leftover = (agentName: string, claimedAt: number | undefined) =>
      ports.db.doc.send(
        new PutCommand({
          TableName: ports.db.table('agent-names'),
          Item: { nameKey: `${actor.userId}#${agentName}`, agentId: crypto.randomUUID(), claimedAt },
        }),
      );
    await leftover('crashed-long-ago', Date.now() - STALE_CLAIM_MS - 1);
    await leftover('crashed-before-claim-times', undefined);
    await leftover('still-being-created', Date.now());
    // Act
    const results = await Promise.all(
      ['crashed-long-ago', 'crashed-before-claim-times', 'still-being-created'].map((name) =>
        settle(createAgent(actor, agentInput(name), ports, publicUrls(ports.config, platform.url))),
      ),
    );
    // Assess
    expect(results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(results[2]!.ok ? null : toErrorResponse(results[2]!.error).status).toBe(409);
  });
});
