import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor, type Page } from '../../functions/core/db/cursor.ts';
import { readItems, sendIf, writeIf, type Db, type ItemRead } from '../../functions/core/db/dynamo.ts';
import { listPage, type IndexListing } from '../../functions/core/db/listing.ts';
import { createOwnerCounts, STALE_PENDING_MS, type OwnerCounts } from '../../functions/core/db/owner-count.ts';
import { putIfUnchanged } from '../../functions/core/db/optimistic-update.ts';
import { createUniqueClaims, STALE_CLAIM_MS, type UniqueClaims } from '../../functions/core/db/unique-claim.ts';
import { ValidationError } from '../../functions/core/errors.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';

const T0 = 1_700_000_000_000;

describe('store helpers on dynalite', () => {
  let local: LocalDb;
  let db: Db;
  let aliases: UniqueClaims<{ userId: string; alias: string | null }>;

  /** The holder's record: an account carrying `alias` (null: it carries none). */
  const putAccount = (userId: string, alias: string | null) => db.doc.send(new PutCommand({ TableName: db.table('users'), Item: { userId, alias } }));
  const holderOf = async (alias: string) => (await aliases.read(alias))?.holderId ?? null;

  beforeAll(async () => {
    local = await startLocalDb();
    db = local.db;
    // Aliases as the user store claims them: the account record is what carries the alias.
    aliases = createUniqueClaims(db, {
      table: db.table('aliases'),
      keyAttribute: 'alias',
      holderAttribute: 'userId',
      async readHolder(userId) {
        const out = await db.doc.send(new GetCommand({ TableName: db.table('users'), Key: { userId }, ConsistentRead: true }));
        return (out.Item as { userId: string; alias: string | null } | undefined) ?? null;
      },
      keyOf: (account) => account.alias,
    });
  });
  afterAll(async () => {
    await local.stop();
  });

  describe('unique claims', () => {
    it('gives a key to exactly one of many concurrent claimants', async () => {
      // Prepare
      const holders = Array.from({ length: 12 }, (_, i) => `racer-${i}`);
      // Act
      const won = await Promise.all(holders.map((holderId) => aliases.claim({ key: 'contested', holderId, claimedAt: T0 })));
      // Assess
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await holderOf('contested')).toBe(holders[won.indexOf(true)]);
    });

    it('lets the holder claim its key again, which renews the claim', async () => {
      // Prepare
      await aliases.claim({ key: 'renewed', holderId: 'u-renew', claimedAt: T0 });
      // Act
      const again = await aliases.claim({ key: 'renewed', holderId: 'u-renew', claimedAt: T0 + 5 });
      // Assess
      expect(again).toBe(true);
      expect(await aliases.read('renewed')).toEqual({ key: 'renewed', holderId: 'u-renew', claimedAt: T0 + 5 });
    });

    it('refuses a young claim whose holder has no record yet: that create may still be writing it', async () => {
      // Prepare
      await aliases.claim({ key: 'in-flight', holderId: 'u-slow', claimedAt: T0 });
      // Act
      const taken = await aliases.claim({ key: 'in-flight', holderId: 'u-fast', claimedAt: T0 + STALE_CLAIM_MS - 1 });
      // Assess
      expect(taken).toBe(false);
      expect(await holderOf('in-flight')).toBe('u-slow');
    });

    it('repairs an old claim that its holder never wrote, or has left for another key', async () => {
      // Prepare
      await aliases.claim({ key: 'crashed', holderId: 'u-crashed', claimedAt: T0 });
      await aliases.claim({ key: 'left', holderId: 'u-renamed', claimedAt: T0 });
      await putAccount('u-renamed', 'elsewhere');
      // Act
      const crashed = await aliases.claim({ key: 'crashed', holderId: 'u-next', claimedAt: T0 + STALE_CLAIM_MS });
      const left = await aliases.claim({ key: 'left', holderId: 'u-next', claimedAt: T0 + STALE_CLAIM_MS });
      // Assess
      expect([crashed, left]).toEqual([true, true]);
      expect([await holderOf('crashed'), await holderOf('left')]).toEqual(['u-next', 'u-next']);
    });

    it('never takes a claim that its holder record carries, however old', async () => {
      // Prepare
      await aliases.claim({ key: 'kept', holderId: 'u-keeper', claimedAt: T0 });
      await putAccount('u-keeper', 'kept');
      // Act
      const taken = await aliases.claim({ key: 'kept', holderId: 'u-other', claimedAt: T0 + 100 * STALE_CLAIM_MS });
      // Assess
      expect(taken).toBe(false);
      expect(await holderOf('kept')).toBe('u-keeper');
    });

    it('repairs a claim written before claims carried a time, and releases one', async () => {
      // Prepare
      await db.doc.send(new PutCommand({ TableName: db.table('aliases'), Item: { alias: 'legacy', userId: 'u-legacy' } }));
      await db.doc.send(new PutCommand({ TableName: db.table('aliases'), Item: { alias: 'legacy-kept', userId: 'u-legacy' } }));
      // Act
      const repaired = await aliases.claim({ key: 'legacy', holderId: 'u-new', claimedAt: T0 });
      await aliases.release({ key: 'legacy-kept', holderId: 'u-legacy', claimedAt: 0 });
      // Assess
      expect(repaired).toBe(true);
      expect(await holderOf('legacy')).toBe('u-new');
      expect(await aliases.read('legacy-kept')).toBeNull();
    });

    it('releases exactly the claim it is given: a renewed claim or another holder is left alone', async () => {
      // Prepare
      await aliases.claim({ key: 'exact', holderId: 'u-exact', claimedAt: T0 });
      await aliases.claim({ key: 'exact', holderId: 'u-exact', claimedAt: T0 + 1 });
      // Act
      await aliases.release({ key: 'exact', holderId: 'u-exact', claimedAt: T0 });
      await aliases.release({ key: 'exact', holderId: 'u-stranger', claimedAt: T0 + 1 });
      await aliases.releaseHeld('exact', 'u-stranger');
      const afterWrongReleases = await holderOf('exact');
      await aliases.release({ key: 'exact', holderId: 'u-exact', claimedAt: T0 + 1 });
      // Assess
      expect(afterWrongReleases).toBe('u-exact');
      expect(await aliases.read('exact')).toBeNull();
    });

    it('gives the claim back when the record write is refused, or fails without landing, and keeps it when it landed', async () => {
      // Prepare
      const failure = new Error('connection reset');
      // Act
      const refused = await aliases.claimFor({ key: 'refused', holderId: 'u-a', claimedAt: T0 }, async () => false);
      const lost = await aliases.claimFor({ key: 'lost', holderId: 'u-b', claimedAt: T0 }, () => Promise.reject(failure)).catch((error: unknown) => error);
      const landed = await aliases
        .claimFor({ key: 'landed', holderId: 'u-c', claimedAt: T0 }, async () => {
          await putAccount('u-c', 'landed');
          throw failure;
        })
        .catch((error: unknown) => error);
      // Assess
      expect([refused, lost, landed]).toEqual([false, failure, failure]);
      expect([await holderOf('refused'), await holderOf('lost'), await holderOf('landed')]).toEqual([null, null, 'u-c']);
    });

    it('moves a holder to a new key, releasing the old one only after the record moved', async () => {
      // Prepare
      await aliases.claim({ key: 'old-name', holderId: 'u-mover', claimedAt: T0 });
      await putAccount('u-mover', 'old-name');
      await aliases.claim({ key: 'occupied', holderId: 'u-occupant', claimedAt: T0 });
      await putAccount('u-occupant', 'occupied');
      let writes = 0;
      // Act
      const blocked = await aliases.move('old-name', { key: 'occupied', holderId: 'u-mover', claimedAt: T0 + 1 }, async () => ++writes);
      const moved = await aliases.move('old-name', { key: 'new-name', holderId: 'u-mover', claimedAt: T0 + 2 }, async () => {
        await putAccount('u-mover', 'new-name');
        return ++writes;
      });
      // Assess
      expect([blocked, moved, writes]).toEqual(['taken', 1, 1]);
      expect([await holderOf('old-name'), await holderOf('new-name'), await holderOf('occupied')]).toEqual([null, 'u-mover', 'u-occupant']);
    });
  });

  describe('optimistic updates', () => {
    const table = () => db.table('conversations');
    const stored = async (conversationId: string) =>
      (await db.doc.send(new GetCommand({ TableName: table(), Key: { conversationId }, ConsistentRead: true }))).Item;

    it('creates a record only where there is none', async () => {
      // Prepare
      const first = { conversationId: 'c-new', updatedAt: T0, title: 'first' };
      // Act
      const created = await putIfUnchanged(db, table(), first, null);
      const again = await putIfUnchanged(db, table(), { ...first, title: 'second' }, null);
      // Assess
      expect(created).toEqual(first);
      expect(again).toBeNull();
      expect((await stored('c-new'))?.['title']).toBe('first');
    });

    it('lets exactly one of two writers that read the same version win', async () => {
      // Prepare
      await putIfUnchanged(db, table(), { conversationId: 'c-race', updatedAt: T0, title: 'read' }, null);
      // Act
      const [a, b] = await Promise.all([
        putIfUnchanged(db, table(), { conversationId: 'c-race', updatedAt: T0 + 10, title: 'a' }, T0),
        putIfUnchanged(db, table(), { conversationId: 'c-race', updatedAt: T0 + 10, title: 'b' }, T0),
      ]);
      // Assess
      const winners = [a, b].filter((w) => w !== null);
      expect(winners).toHaveLength(1);
      expect((await stored('c-race'))?.['title']).toBe(winners[0]!.title);
    });

    it('moves a write within the same millisecond past the version it replaced, so a second writer still loses', async () => {
      // Prepare
      await putIfUnchanged(db, table(), { conversationId: 'c-same-ms', updatedAt: T0, title: 'read' }, null);
      // Act
      const first = await putIfUnchanged(db, table(), { conversationId: 'c-same-ms', updatedAt: T0, title: 'first' }, T0);
      const second = await putIfUnchanged(db, table(), { conversationId: 'c-same-ms', updatedAt: T0, title: 'second' }, T0);
      // Assess
      expect(first?.updatedAt).toBe(T0 + 1);
      expect(second).toBeNull();
      expect(await stored('c-same-ms')).toMatchObject({ title: 'first', updatedAt: T0 + 1 });
    });
  });

  describe('index listings', () => {
    // A user's conversations, most recently updated first, optionally those with one agent.
    const conversationsOf = (userId: string, filter?: IndexListing['filter']): IndexListing => ({
      table: db.table('conversations'),
      index: 'byUser',
      partitionKey: 'userId',
      partitionValue: userId,
      sortKey: 'updatedAt',
      itemKey: 'conversationId',
      newestFirst: true,
      filter,
    });
    const withAgentA = { expression: 'agentId = :a', values: { ':a': 'agent-a' } };

    async function putConversations(userId: string, count: number, agentOf: (i: number) => string): Promise<void> {
      const items = Array.from({ length: count }, (_, i) => ({
        conversationId: `${userId}-${String(i).padStart(5, '0')}`,
        userId,
        updatedAt: T0 + i,
        agentId: agentOf(i),
      }));
      for (let i = 0; i < items.length; i += 25) {
        await db.doc.send(
          new BatchWriteCommand({ RequestItems: { [db.table('conversations')]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
        );
      }
    }

    async function readAll(listing: IndexListing, limit: number) {
      const seen: string[] = [];
      const pageSizes: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 100; page++) {
        const result: Page<{ conversationId: string }> = await listPage<{ conversationId: string }>(db, listing, limit, cursor);
        seen.push(...result.items.map((item) => item.conversationId));
        pageSizes.push(result.items.length);
        cursor = result.nextCursor;
        if (cursor === null) break;
      }
      return { seen, pageSizes };
    }

    it('pages newest first through a partition, each item once, and says which page is the last', async () => {
      // Prepare
      await putConversations('lister', 7, () => 'agent-b');
      // Act
      const { seen, pageSizes } = await readAll(conversationsOf('lister'), 3);
      const exact = await readAll(conversationsOf('lister'), 7);
      // Assess
      expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `lister-0000${6 - i}`));
      expect(pageSizes).toEqual([3, 3, 1]);
      expect(exact.pageSizes).toEqual([7]);
    });

    it('fills filtered pages, and answers a rare filter over a long partition within a bounded number of reads', async () => {
      // Prepare
      await putConversations('mixed', 10, (i) => (i % 2 === 0 ? 'agent-a' : 'agent-b'));
      await putConversations('needle', 1_050, (i) => (i === 0 ? 'agent-a' : 'agent-b'));
      // Act
      const mixed = await readAll(conversationsOf('mixed', withAgentA), 2);
      const first = await listPage(db, conversationsOf('needle', withAgentA), 5, null);
      const rest = await readAll(conversationsOf('needle', withAgentA), 5);
      // Assess
      expect(mixed.pageSizes).toEqual([2, 2, 1]);
      expect(first.items).toEqual([]);
      expect(first.nextCursor).not.toBeNull();
      expect(rest.seen).toEqual(['needle-00000']);
    });

    /** `db` with its Query calls and the items they evaluated (before filters) counted. */
    function countingReads() {
      const reads = { calls: 0, items: 0 };
      const send = db.doc.send.bind(db.doc) as (command: unknown) => Promise<{ ScannedCount?: number }>;
      const doc = Object.create(db.doc, {
        send: {
          value: async (command: unknown) => {
            const out = await send(command);
            if (command instanceof QueryCommand) {
              reads.calls += 1;
              reads.items += out.ScannedCount ?? 0;
            }
            return out;
          },
        },
      }) as Db['doc'];
      const reset = () => Object.assign(reads, { calls: 0, items: 0 });
      return { db: { ...db, doc }, reads, reset };
    }

    it('reads a page and one item past it, whatever the partition holds, on the first page and from a cursor', async () => {
      // Prepare
      await putConversations('small', 25, () => 'agent-b');
      await putConversations('large', 1_000, () => 'agent-b');
      const counted = countingReads();
      const cost = async (userId: string, cursor: string | null) => {
        counted.reset();
        const page = await listPage<{ conversationId: string }>(counted.db, conversationsOf(userId), 20, cursor);
        return { page, reads: { ...counted.reads } };
      };
      // Act
      const small = await cost('small', null);
      const large = await cost('large', null);
      const largeNext = await cost('large', large.page.nextCursor);
      // Assess
      expect(small.reads).toEqual({ calls: 1, items: 21 });
      expect(large.reads).toEqual({ calls: 1, items: 21 });
      expect(largeNext.reads).toEqual({ calls: 1, items: 21 });
      expect(largeNext.page.items[0]?.conversationId).toBe('large-00979');
    });

    it('fills a page that a common filter thins out with reads that follow the page, not the partition', async () => {
      // Prepare: one item in ten fails the filter, as deleted agents among active ones.
      await putConversations('thinned-small', 40, (i) => (i % 10 === 3 ? 'agent-b' : 'agent-a'));
      await putConversations('thinned-large', 1_000, (i) => (i % 10 === 3 ? 'agent-b' : 'agent-a'));
      const counted = countingReads();
      const cost = async (userId: string) => {
        counted.reset();
        const page = await listPage(counted.db, conversationsOf(userId, withAgentA), 20, null);
        return { size: page.items.length, reads: { ...counted.reads } };
      };
      // Act
      const small = await cost('thinned-small');
      const large = await cost('thinned-large');
      // Assess
      expect(small.size).toBe(20);
      expect(large).toEqual(small);
      expect(large.reads.calls).toBeLessThanOrEqual(2);
      expect(large.reads.items).toBeLessThanOrEqual(2 * 21);
    });

    it('serves an offset by reading the keys it skips, then the page: in proportion to offset plus page, and bounded', async () => {
      // Prepare
      await putConversations('offset', 300, () => 'agent-b');
      await putConversations('haystack', 2_000, () => 'agent-b');
      const counted = countingReads();
      // Act
      const page = await listPage<{ conversationId: string }>(counted.db, conversationsOf('offset'), 20, null, 40);
      const reads = { ...counted.reads };
      const pastTheEnd = await listPage(db, conversationsOf('offset'), 20, null, 300);
      const tooFar = await listPage(db, conversationsOf('haystack', withAgentA), 20, null, 1).catch((error: unknown) => error);
      // Assess
      expect(page.items.map((item) => item.conversationId)).toEqual(Array.from({ length: 20 }, (_, i) => `offset-${String(259 - i).padStart(5, '0')}`));
      expect(reads).toEqual({ calls: 2, items: 40 + 21 });
      expect(pastTheEnd).toEqual({ items: [], nextCursor: null });
      expect(tooFar).toBeInstanceOf(ValidationError);
      expect((tooFar as ValidationError).issues).toEqual([expect.stringMatching(/^offset: .*cursor/)]);
    });

    it("refuses a cursor of another partition's listing, or one it did not make, with a 400", async () => {
      // Prepare
      const foreign = encodeCursor({ conversationId: 'lister-00003', userId: 'lister', updatedAt: T0 + 3 });
      const forged = encodeCursor({ conversationId: 'x' });
      // Act
      const attempts = await Promise.all(
        [foreign, forged, 'not-a-cursor'].map((cursor) => listPage(db, conversationsOf('someone-else'), 3, cursor).catch((error: unknown) => error)),
      );
      // Assess
      for (const attempt of attempts) expect(attempt).toBeInstanceOf(ValidationError);
    });
  });

  describe('per-owner counts', () => {
    const MAX = 5;
    /** The records being counted: resource id -> owner, as a store's table would hold them. */
    const records = new Map<string, string>();
    const clock = { at: T0, now: () => clock.at };
    let counts: OwnerCounts;
    let nextId = 0;
    const newId = () => `res-${nextId++}`;
    const putRecord = (ownerId: string, id: string) => async () => {
      records.set(id, ownerId);
      return true as const;
    };
    const heldBy = (ownerId: string) => [...records.values()].filter((owner) => owner === ownerId).length;
    const counter = async (ownerId: string) =>
      (await db.doc.send(new GetCommand({ TableName: db.table('action-counts'), Key: { ownerId }, ConsistentRead: true }))).Item;

    beforeAll(() => {
      counts = createOwnerCounts(db, {
        table: db.table('action-counts'),
        max: MAX,
        clock,
        holds: async (ownerId, id) => records.get(id) === ownerId,
        countHeld: async (ownerId) => heldBy(ownerId),
      });
    });

    it('lets exactly as many concurrent adds land as there are places left, and refuses the rest', async () => {
      // Prepare
      await counts.add('racer', newId(), putRecord('racer', 'res-first'));
      // Act
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => newId()).map((id) => counts.add('racer', id, putRecord('racer', id))));
      // Assess
      expect(outcomes.filter((o) => o === true)).toHaveLength(MAX - 1);
      expect(outcomes.filter((o) => o === 'limit')).toHaveLength(12 - (MAX - 1));
      expect(heldBy('racer')).toBe(MAX);
      expect(await counter('racer')).toEqual({ ownerId: 'racer', held: MAX, pending: {} });
    });

    it('gives the place back when the write is refused or fails without landing, and keeps it when it landed', async () => {
      // Prepare
      const failure = new Error('connection reset');
      const landedId = newId();
      // Act
      const refused = await counts.add('writer', newId(), async () => false);
      const lost = await counts.add('writer', newId(), () => Promise.reject(failure)).catch((error: unknown) => error);
      const landed = await counts
        .add('writer', landedId, async () => {
          records.set(landedId, 'writer');
          throw failure;
        })
        .catch((error: unknown) => error);
      // Assess
      expect([refused, lost, landed]).toEqual([false, failure, failure]);
      expect(await counter('writer')).toEqual({ ownerId: 'writer', held: 1, pending: {} });
    });

    it('gives a place back on remove only when the record was removed', async () => {
      // Prepare
      const id = newId();
      await counts.add('remover', id, putRecord('remover', id));
      // Act
      const removed = await counts.remove('remover', id, async () => records.delete(id));
      const again = await counts.remove('remover', id, async () => records.delete(id));
      // Assess
      expect([removed, again]).toEqual([true, false]);
      expect(await counts.count('remover')).toBe(0);
    });

    it('starts the counter of an owner whose records predate it from a count of the records', async () => {
      // Prepare
      for (let i = 0; i < MAX - 1; i++) records.set(`legacy-${i}`, 'legacy');
      // Act
      const outcomes = await Promise.all([newId(), newId(), newId()].map((id) => counts.add('legacy', id, putRecord('legacy', id))));
      // Assess
      expect(outcomes.filter((o) => o === true)).toHaveLength(1);
      expect(await counts.count('legacy')).toBe(MAX);
    });

    it('settles an operation that stopped half-way by its record once it is stale, and refuses one still under way', async () => {
      // Prepare: an owner at the limit with three operations that stopped after taking a place; one had written its record.
      const owner = 'crashed';
      const ids = [newId(), newId(), newId()];
      records.set(ids[0]!, owner);
      for (const id of [newId(), newId()]) await counts.add(owner, id, putRecord(owner, id));
      const pending = Object.fromEntries(ids.map((id) => [id, clock.at]));
      await db.doc.send(new PutCommand({ TableName: db.table('action-counts'), Item: { ownerId: owner, held: MAX, pending } }));
      const youngId = newId();
      const young = await counts.add(owner, youngId, putRecord(owner, youngId));
      const sameIdYoung = await counts.remove(owner, ids[1]!, async () => true);
      clock.at += STALE_PENDING_MS + 1;
      // Act
      const afterRepair = await Promise.all([newId(), newId(), newId()].map((id) => counts.add(owner, id, putRecord(owner, id))));
      // Assess
      expect([young, sameIdYoung]).toEqual(['limit', 'busy']);
      expect(afterRepair.filter((o) => o === true)).toHaveLength(2);
      expect(heldBy(owner)).toBe(MAX);
      expect(await counter(owner)).toEqual({ ownerId: owner, held: MAX, pending: {} });
    });
  });

  describe('reading items together', () => {
    it('reads items of several tables in one call, each where its key says, null where there is none', async () => {
      // Prepare
      await putAccount('batch-a', 'alpha');
      await putAccount('batch-b', null);
      await db.doc.send(new PutCommand({ TableName: db.table('tokens'), Item: { tokenId: 'batch-t', userId: 'batch-a' } }));
      const account = (userId: string): ItemRead<{ userId: string; alias: string | null }> => ({
        table: db.table('users'),
        key: { userId },
        as: (item) => item as { userId: string; alias: string | null },
      });
      const token: ItemRead<{ tokenId: string; userId: string }> = {
        table: db.table('tokens'),
        key: { tokenId: 'batch-t' },
        as: (item) => item as { tokenId: string; userId: string },
      };
      // Act: the order of the answer is the order asked, whatever order the batch answers in
      const [b, missing, t, a] = await readItems(db, [account('batch-b'), account('batch-none'), token, account('batch-a')]);
      // Assess
      expect(b).toEqual({ userId: 'batch-b', alias: null });
      expect(missing).toBeNull();
      expect(t).toEqual({ tokenId: 'batch-t', userId: 'batch-a' });
      expect(a).toEqual({ userId: 'batch-a', alias: 'alpha' });
    });

    it('reads more keys than one BatchGetItem takes (100), each in its place', async () => {
      // Prepare: 150 accounts, every third one missing
      const ids = Array.from({ length: 150 }, (_, i) => `many-${i}`);
      for (const [i, id] of ids.entries()) if (i % 3 !== 0) await putAccount(id, null);
      const account = (userId: string): ItemRead<string> => ({ table: db.table('users'), key: { userId }, as: (item) => item['userId'] as string });

      // Act
      const read = await readItems(db, ids.map(account));

      // Assess
      expect(read).toEqual(ids.map((id, i) => (i % 3 === 0 ? null : id)));
    });
  });

  describe('conditional writes', () => {
    it('answers with the output when the condition held, null when it did not, and rethrows anything else', async () => {
      // Prepare
      const table = db.table('rate-limits');
      const add = (limit: number) =>
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { bucketKey: 'helpers' },
            UpdateExpression: 'ADD hits :one',
            ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
            ExpressionAttributeValues: { ':one': 1, ':limit': limit },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
      // Act
      const applied = await sendIf(add(1));
      const refused = await sendIf(add(1));
      const refusedWrite = await writeIf(add(1));
      const invalid = await sendIf(
        db.doc.send(new UpdateCommand({ TableName: table, Key: { bucketKey: 'helpers' }, UpdateExpression: 'ADD', ExpressionAttributeValues: {} })),
      ).catch((error: unknown) => error);
      // Assess
      expect(applied?.Attributes).toEqual({ hits: 1 });
      expect(refused).toBeNull();
      expect(refusedWrite).toBe(false);
      expect((invalid as Error).name).toBe('ValidationException');
    });
  });
});
