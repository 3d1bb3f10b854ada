import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../clock.ts';
import { writeIf, type Db } from './dynamo.ts';
import { STALE_CLAIM_MS } from './unique-claim.ts';

/**
 * A pending entry this old belongs to an operation that stopped between its writes (a crash, a
 * lost connection), and whoever finds it settles it. The same bound as for unique claims: the
 * writes of one operation follow each other in one request, milliseconds apart.
 */
export const STALE_PENDING_MS = STALE_CLAIM_MS;

/** Attempts to take a place (or mark a removal), each after initialising the counter or settling a stale entry. */
const MAX_MARK_ATTEMPTS = 3;

/** The counter table of one kind of resource, and the records it counts. */
export interface OwnerCountTable {
  /** The physical table name; its partition key is `ownerId`. */
  readonly table: string;
  /** The most resources of this kind one owner may hold. */
  readonly max: number;
  /** Whether the owner holds resource `id` now: its record exists and is the owner's (strongly consistent). */
  holds(ownerId: string, id: string): Promise<boolean>;
  /** How many the owner holds, counted from the records: read once per owner, for one whose counter does not exist yet. */
  countHeld(ownerId: string): Promise<number>;
  /** For the ages of pending entries; the system clock unless a test passes another. */
  readonly clock?: Clock;
}

export interface OwnerCounts {
  /** How many the owner holds, counting operations under way (strongly consistent). */
  count(ownerId: string): Promise<number>;
  /**
   * Takes one of the owner's places for resource `id`, then runs `write`, the write of its record.
   * 'limit' when the owner holds `max` already; 'busy' when another operation on `id` is under way;
   * false when `write` reported that its own condition failed (the place is given back at once).
   * When `write` throws, the place is given back unless the record landed after all.
   */
  add<T>(ownerId: string, id: string, write: () => Promise<T | false>): Promise<T | false | 'limit' | 'busy'>;
  /** Runs `remove`, the delete of the record, and gives the place back when it applied (true). 'busy' as for `add`. */
  remove(ownerId: string, id: string, remove: () => Promise<boolean>): Promise<boolean | 'busy'>;
}

interface Counter {
  readonly held: number;
  /** Resource id -> when the operation on it began. */
  readonly pending: Record<string, number>;
}

/**
 * Per-owner limits with single-item conditional writes only (no transactions: dynalite has none,
 * see docs/ARCHITECTURE.md, "Data rules as applied"), so a limit check reads one item instead of the owner's records.
 *
 * One counter item per owner: `held`, and `pending`, the resources with an operation under way
 * (id -> when it began). The invariant: `held` is the number of resources that are the owner's
 * records or pending, each counted once. Every operation keeps it:
 * 1. Add: one conditional update takes the place and marks the id pending:
 *    `held = held + 1` if `held < max` and the id is not pending. Of concurrent adds at the limit
 *    exactly as many land as there are places, so the limit is never exceeded.
 * 2. Write the record; the id is still pending, so `held` counts it once either way.
 * 3. Settle: remove the pending entry, and when the record is not there (the write was refused)
 *    give the place back (`held - 1`) in the same update. The update's condition is the entry as
 *    this operation wrote it, so an entry is settled once.
 * A remove marks the id pending (held unchanged), deletes the record, then settles the same way.
 * At most one operation holds an id's entry at a time, so a create and a delete of one id never
 * settle each other's entry.
 *
 * A crash leaves at worst a pending entry. Whoever finds it stale (at the limit, or on the same id)
 * settles it by the record, the truth: the owner holds the record, so the place stays taken;
 * otherwise it is given back. The assumption, as for unique claims, is that an operation settles
 * within STALE_PENDING_MS. An owner whose counter does not exist yet (records older than counters)
 * gets one from a count of their records, written only if none exists: every add and remove needs
 * the counter first, so no record changes between a winning count and its write.
 */
export function createOwnerCounts(db: Db, counts: OwnerCountTable): OwnerCounts {
  const { table, max } = counts;
  const clock = counts.clock ?? systemClock;
  const names = (id: string) => ({ '#held': 'held', '#pending': 'pending', '#id': id });

  async function read(ownerId: string): Promise<Counter | null> {
    const out = await db.doc.send(new GetCommand({ TableName: table, Key: { ownerId }, ConsistentRead: true }));
    if (out.Item === undefined) return null;
    return { held: Number(out.Item['held']), pending: (out.Item['pending'] ?? {}) as Record<string, number> };
  }

  /** The counter, made from a count of the records when the owner has none yet. */
  async function ensure(ownerId: string): Promise<Counter> {
    const existing = await read(ownerId);
    if (existing !== null) return existing;
    const held = await counts.countHeld(ownerId);
    // Concurrent first operations all count; only one counter is written, the others use it.
    await writeIf(
      db.doc.send(new PutCommand({ TableName: table, Item: { ownerId, held, pending: {} }, ConditionExpression: 'attribute_not_exists(ownerId)' })),
    );
    return (await read(ownerId)) ?? { held, pending: {} };
  }

  /** Marks `id` pending as of `since`; an add takes a place too. */
  function mark(ownerId: string, id: string, since: number, takesPlace: boolean): Promise<boolean> {
    return writeIf(
      db.doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { ownerId },
          UpdateExpression: takesPlace ? 'SET #held = #held + :one, #pending.#id = :since' : 'SET #pending.#id = :since',
          ConditionExpression: `${takesPlace ? '#held < :max' : 'attribute_exists(#held)'} AND attribute_not_exists(#pending.#id)`,
          ExpressionAttributeNames: names(id),
          ExpressionAttributeValues: { ':since': since, ...(takesPlace ? { ':one': 1, ':max': max } : {}) },
        }),
      ),
    );
  }

  /** Ends the entry `id` wrote at `since`: the place stays when the owner holds the record, and is given back otherwise. */
  function settle(ownerId: string, id: string, since: number, held: boolean): Promise<boolean> {
    return writeIf(
      db.doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { ownerId },
          UpdateExpression: held ? 'REMOVE #pending.#id' : 'SET #held = #held - :one REMOVE #pending.#id',
          ConditionExpression: '#pending.#id = :since',
          // `#held` is named only where the expression uses it: DynamoDB refuses unused names.
          ExpressionAttributeNames: held ? { '#pending': 'pending', '#id': id } : names(id),
          ExpressionAttributeValues: { ':since': since, ...(held ? {} : { ':one': 1 }) },
        }),
      ),
    );
  }

  /** Settles an entry by the record: what a stale entry, or one whose write failed without an answer, needs. */
  async function settleByRecord(ownerId: string, id: string, since: number): Promise<boolean> {
    return settle(ownerId, id, since, await counts.holds(ownerId, id));
  }

  /** The entries of operations that stopped half-way (all of them, or only `id`'s). */
  function staleEntries(counter: Counter, only?: string): [string, number][] {
    const cutoff = clock.now() - STALE_PENDING_MS;
    return Object.entries(counter.pending).filter(([id, since]) => since <= cutoff && (only === undefined || id === only));
  }

  /**
   * Marks `id`, first making the counter or settling what stands in the way; 'limit' or 'busy' when
   * it cannot. After settling it tries again whoever settled what: concurrent callers at the limit
   * share the stale entries between them, and each must see the places any of them gave back.
   */
  async function markFor(ownerId: string, id: string, since: number, takesPlace: boolean): Promise<true | 'limit' | 'busy'> {
    for (let attempt = 0; attempt < MAX_MARK_ATTEMPTS; attempt++) {
      if (await mark(ownerId, id, since, takesPlace)) return true;
      const counter = await ensure(ownerId);
      const entry = counter.pending[id];
      let stale: [string, number][] = [];
      if (entry !== undefined) {
        if (entry > clock.now() - STALE_PENDING_MS) return 'busy';
        stale = staleEntries(counter, id);
      } else if (takesPlace && counter.held >= max) {
        stale = staleEntries(counter);
        if (stale.length === 0) return 'limit';
      }
      for (const [staleId, staleSince] of stale) await settleByRecord(ownerId, staleId, staleSince);
    }
    return takesPlace ? 'limit' : 'busy';
  }

  return {
    async count(ownerId) {
      return (await ensure(ownerId)).held;
    },
    async add(ownerId, id, write) {
      const since = clock.now();
      const marked = await markFor(ownerId, id, since, true);
      if (marked !== true) return marked;
      let outcome: Awaited<ReturnType<typeof write>>;
      try {
        outcome = await write();
      } catch (error) {
        // The write may have landed without an answer: the record decides. If this fails too, the
        // entry stays pending and the next operation that finds it stale settles it the same way.
        await settleByRecord(ownerId, id, since).catch(() => false);
        throw error;
      }
      // The record is written (or refused) already; a settle that fails leaves a pending entry that
      // is settled later by the record, so it does not fail the operation.
      await settle(ownerId, id, since, outcome !== false).catch(() => false);
      return outcome;
    },
    async remove(ownerId, id, remove) {
      const since = clock.now();
      const marked = await markFor(ownerId, id, since, false);
      if (marked !== true) return 'busy';
      let removed: boolean;
      try {
        removed = await remove();
      } catch (error) {
        await settleByRecord(ownerId, id, since).catch(() => false);
        throw error;
      }
      // A remove that did not apply (the record was gone already) leaves the place as it was.
      await settle(ownerId, id, since, !removed).catch(() => false);
      return removed;
    },
  };
}
