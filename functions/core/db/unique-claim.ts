import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { writeIf, type Db } from './dynamo.ts';

/** A claim on a unique key (a name, an alias): who holds it and since when, in epoch milliseconds. */
export interface Claim {
  readonly key: string;
  readonly holderId: string;
  /** 0 for claims written before claims carried a time: they count as old. */
  readonly claimedAt: number;
}

/**
 * A claim this old that its holder's record does not carry is left over (a create that crashed
 * between its two writes, a rename that crashed before releasing the old name) and may be taken.
 */
export const STALE_CLAIM_MS = 60_000;

/** The table of one kind of unique key, and the records (`R`) that hold and carry the keys. */
export interface ClaimTable<R> {
  /** The physical table name; its partition key is `keyAttribute`. */
  readonly table: string;
  readonly keyAttribute: string;
  readonly holderAttribute: string;
  /** The holder's record, strongly consistent; null when there is none. */
  readHolder(holderId: string): Promise<R | null>;
  /** The key a record carries now (null: none). A claim whose holder's record carries it is never taken. */
  keyOf(record: R): string | null;
}

export interface UniqueClaims<R> {
  /** The claim on `key`, strongly consistent; null when nobody holds it. */
  read(key: string): Promise<Claim | null>;
  /** The record that holds `key` and carries it; null for a free key or a leftover claim. */
  holderOf(key: string): Promise<R | null>;
  /**
   * Claims the key; false when another holder has it. Claiming one's own key again renews it; a
   * stale claim of another holder is repaired (removed) and the key claimed.
   */
  claim(claim: Claim): Promise<boolean>;
  /** Removes exactly this claim (same holder, same time): a claim renewed or taken since stays. */
  release(claim: Claim): Promise<void>;
  /** Removes the holder's claim on `key`, whatever its time: the key its record has just left. */
  releaseHeld(key: string, holderId: string): Promise<void>;
  /**
   * Claims `claim.key`, then runs `write`, the write of the record that carries it. 'taken' when
   * another holder has the key; false when `write` reported its own condition failed (the claim
   * is given back at once). When `write` throws, the claim is given back unless the record carries
   * the key after all (a write whose answer was lost may have landed).
   */
  claimFor<T>(claim: Claim, write: () => Promise<T | false>): Promise<T | false | 'taken'>;
  /** As `claimFor`, for a record that carried `from` before: `from` is released once the record moved. */
  move<T>(from: string, to: Claim, write: () => Promise<T | false>): Promise<T | false | 'taken'>;
}

/**
 * Unique keys with single-item conditional writes only (no transactions: dynalite has none). The
 * claim item, keyed by the unique value, is what makes a key unique; the holder's record (agent,
 * server, account) carries the key too and is written after the claim.
 *
 * The protocol:
 * 1. Claim: put `{key, holder, claimedAt}` if no item has that key or the holder already has it.
 *    Of concurrent claimants exactly one put lands.
 * 2. Write the record. A record write refused by its own condition gives the claim back at once.
 * 3. A rename releases the old key only after the record carries the new one.
 * 4. Repair: a claim is stale when it is older than STALE_CLAIM_MS and its holder's record does not
 *    carry the key. A claimant deletes exactly the claim it inspected (holder and claimedAt in the
 *    delete's condition), then claims again.
 *
 * Why no race lets two records carry one key: at every moment the claim item has one holder, and
 * a live claim is never taken. A claim is live when its holder's record carries the key, or when it
 * is young: a young claim whose record is missing is a create whose record write is still on its
 * way, so it is refused rather than repaired (taking it over at once is how two agents came to share
 * a name when the first create's write was slow). A holder that renews its claim, or another
 * claimant that repairs it first, changes the item, so a repair's conditional delete then fails and
 * removes nothing. The one assumption is that a holder writes its record within STALE_CLAIM_MS of
 * claiming: the two writes follow each other in one request, normally milliseconds apart; a process
 * stalled for longer than that between them could find its key taken when it resumes.
 *
 * A crash leaves at worst a claim nobody carries (after step 1 or before step 3's release), which
 * the next claimant of that key repairs once it is stale.
 */
export function createUniqueClaims<R>(db: Db, claims: ClaimTable<R>): UniqueClaims<R> {
  const { table, keyAttribute, holderAttribute } = claims;
  const names = { '#key': keyAttribute, '#holder': holderAttribute };

  async function carrier(holderId: string, key: string): Promise<R | null> {
    const record = await claims.readHolder(holderId);
    return record !== null && claims.keyOf(record) === key ? record : null;
  }
  const isInUse = async (holderId: string, key: string) => (await carrier(holderId, key)) !== null;

  async function read(key: string): Promise<Claim | null> {
    const out = await db.doc.send(new GetCommand({ TableName: table, Key: { [keyAttribute]: key }, ConsistentRead: true }));
    const holderId = out.Item?.[holderAttribute] as string | undefined;
    return holderId === undefined ? null : { key, holderId, claimedAt: Number(out.Item?.['claimedAt'] ?? 0) };
  }

  function put(claim: Claim): Promise<boolean> {
    return writeIf(
      db.doc.send(
        new PutCommand({
          TableName: table,
          Item: { [keyAttribute]: claim.key, [holderAttribute]: claim.holderId, claimedAt: claim.claimedAt },
          ConditionExpression: 'attribute_not_exists(#key) OR #holder = :holder',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':holder': claim.holderId },
        }),
      ),
    );
  }

  async function release(claim: Claim): Promise<void> {
    const legacy = claim.claimedAt === 0;
    await writeIf(
      db.doc.send(
        new DeleteCommand({
          TableName: table,
          Key: { [keyAttribute]: claim.key },
          ConditionExpression: `#holder = :holder AND ${legacy ? 'attribute_not_exists(claimedAt)' : 'claimedAt = :at'}`,
          ExpressionAttributeNames: { '#holder': holderAttribute },
          ExpressionAttributeValues: { ':holder': claim.holderId, ...(legacy ? {} : { ':at': claim.claimedAt }) },
        }),
      ),
    );
  }

  async function releaseHeld(key: string, holderId: string): Promise<void> {
    await writeIf(
      db.doc.send(
        new DeleteCommand({
          TableName: table,
          Key: { [keyAttribute]: key },
          ConditionExpression: '#holder = :holder',
          ExpressionAttributeNames: { '#holder': holderAttribute },
          ExpressionAttributeValues: { ':holder': holderId },
        }),
      ),
    );
  }

  async function claim(claim: Claim): Promise<boolean> {
    // Two rounds: a claim that vanished or was repaired after the first put failed gets one more put.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await put(claim)) return true;
      const existing = await read(claim.key);
      if (existing === null) continue;
      if (claim.claimedAt - existing.claimedAt < STALE_CLAIM_MS) return false;
      if (await isInUse(existing.holderId, claim.key)) return false;
      await release(existing);
    }
    return false;
  }

  async function claimFor<T>(held: Claim, write: () => Promise<T | false>): Promise<T | false | 'taken'> {
    if (!(await claim(held))) return 'taken';
    let written: T | false;
    try {
      written = await write();
    } catch (error) {
      // Unsure, keep the claim: a leftover claim is repaired later, a record without one is a duplicate waiting to happen.
      const landed = await isInUse(held.holderId, held.key).catch(() => true);
      if (!landed) await release(held).catch(() => undefined);
      throw error;
    }
    if (written === false) await release(held);
    return written;
  }

  return {
    read,
    async holderOf(key) {
      const held = await read(key);
      return held === null ? null : carrier(held.holderId, key);
    },
    claim,
    release,
    releaseHeld,
    claimFor,
    async move(from, to, write) {
      const written = await claimFor(to, write);
      if (written !== false && written !== 'taken') await releaseHeld(from, to.holderId);
      return written;
    },
  };
}
