import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../core/clock.ts';
import type { Page } from '../core/db/cursor.ts';
import { countItems, writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage, updateListedFields, type IndexListing, type PageRequest } from '../core/db/listing.ts';
import { createOwnerCounts } from '../core/db/owner-count.ts';
import { createUniqueClaims } from '../core/db/unique-claim.ts';
import { MAX_SKILLS_PER_OWNER, type SkillRecord } from './skill.schema.ts';

/** Fields an update may change; the name never changes (renaming is delete and create). */
export type SkillChanges = Partial<Pick<SkillRecord, 'description' | 'skillMd' | 'sha256' | 'sizeBytes' | 'visibility'>>;

/**
 * Skills (`skills`), their names (`skill-names`, `{ownerId}#{skillName}` -> skillId, claimed by the
 * protocol of `core/db/unique-claim.ts`, so a name is unique per owner) and the per-owner counter
 * (`skill-counts`, `core/db/owner-count.ts`). The SKILL.md text lives in the item: at most 256 KB,
 * under DynamoDB's 400 KB item limit with the other fields.
 */
export interface SkillStore {
  get(skillId: string): Promise<SkillRecord | null>;
  getByName(ownerId: string, skillName: string): Promise<SkillRecord | null>;
  /** Takes a place on the owner's count, claims the name, writes the record. */
  create(skill: SkillRecord): Promise<'created' | 'name-taken' | 'limit'>;
  /** Changes the given fields; null when the skill no longer exists. */
  update(skillId: string, changes: SkillChanges, now: number): Promise<SkillRecord | null>;
  /** Removes the record (giving the owner's place back), then frees its name. 'busy' while another create or delete of it runs. */
  delete(skill: SkillRecord): Promise<'deleted' | 'busy'>;
  countByOwner(ownerId: string): Promise<number>;
  /** A page of an owner's skills, newest first, optionally of one visibility. */
  listByOwner(ownerId: string, filter: { visibility?: 'private' | 'public' | undefined }, page: Omit<PageRequest, 'offset'>): Promise<Page<SkillRecord>>;
  /** A page of the public skills, newest first. */
  listPublic(page: Omit<PageRequest, 'offset'>): Promise<Page<SkillRecord>>;
}

/** Sets or clears the sparse `publicListing` key so the public index holds exactly the public skills. */
function withListing(skill: SkillRecord): SkillRecord {
  const { publicListing: _previous, ...rest } = skill;
  return skill.visibility === 'public' ? { ...rest, publicListing: 'public' } : rest;
}

export function createSkillStore(db: Db, clock: Clock): SkillStore {
  const skills = db.table('skills');
  const nameKey = (ownerId: string, skillName: string) => `${ownerId}#${skillName}`;

  const get = async (skillId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: skills, Key: { skillId }, ConsistentRead: true }));
    return (out.Item as SkillRecord | undefined) ?? null;
  };

  const names = createUniqueClaims(db, {
    table: db.table('skill-names'),
    keyAttribute: 'nameKey',
    holderAttribute: 'skillId',
    readHolder: get,
    keyOf: (s) => nameKey(s.ownerId, s.skillName),
  });

  const counts = createOwnerCounts(db, {
    table: db.table('skill-counts'),
    max: MAX_SKILLS_PER_OWNER,
    clock,
    holds: async (ownerId, skillId) => (await get(skillId))?.ownerId === ownerId,
    countHeld: (ownerId) =>
      countItems(db, { TableName: skills, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId } }),
  });

  const listing = (index: 'byOwner' | 'publicSkills', partitionKey: string, partitionValue: string, filter?: IndexListing['filter']): IndexListing => ({
    table: skills,
    index,
    partitionKey,
    partitionValue,
    sortKey: 'createdAt',
    itemKey: 'skillId',
    newestFirst: true,
    filter,
  });

  return {
    get,
    getByName: (ownerId, skillName) => names.holderOf(nameKey(ownerId, skillName)),
    async create(skill) {
      const claim = { key: nameKey(skill.ownerId, skill.skillName), holderId: skill.skillId, claimedAt: clock.now() };
      const created = await counts.add(skill.ownerId, skill.skillId, async () => {
        const claimed = await names.claimFor(claim, () =>
          writeIf(db.doc.send(new PutCommand({ TableName: skills, Item: withListing(skill), ConditionExpression: 'attribute_not_exists(skillId)' }))),
        );
        return claimed === true;
      });
      if (created === true) return 'created';
      return created === 'limit' ? 'limit' : 'name-taken';
    },
    update: (skillId, changes, now) => updateListedFields<SkillRecord>(db, skills, { skillId }, changes, now),
    async delete(skill) {
      const removed = await counts.remove(skill.ownerId, skill.skillId, () =>
        writeIf(db.doc.send(new DeleteCommand({ TableName: skills, Key: { skillId: skill.skillId }, ConditionExpression: 'attribute_exists(skillId)' }))),
      );
      if (removed === 'busy') return 'busy';
      // Also when a concurrent delete removed the record first: releasing the name is idempotent.
      await names.releaseHeld(nameKey(skill.ownerId, skill.skillName), skill.skillId);
      return 'deleted';
    },
    countByOwner: (ownerId) => counts.count(ownerId),
    listByOwner(ownerId, filter, page) {
      const byVisibility =
        filter.visibility === undefined
          ? undefined
          : { expression: '#visibility = :visibility', names: { '#visibility': 'visibility' }, values: { ':visibility': filter.visibility } };
      return listPage<SkillRecord>(db, listing('byOwner', 'ownerId', ownerId, byVisibility), page.limit, page.cursor);
    },
    listPublic(page) {
      return listPage<SkillRecord>(db, listing('publicSkills', 'publicListing', 'public'), page.limit, page.cursor);
    },
  };
}
