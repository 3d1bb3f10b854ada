import { randomUUID } from 'node:crypto';
import { requireAlias, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { AccessDeniedError, ConflictError, NotFoundError, PayloadTooLargeError, ValidationError } from '../core/errors.ts';
import { Reply } from '../core/http/route.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';
import { sha256Hex } from '../core/ids.ts';
import { syncResource, type PublicResource } from '../search/resource-index.ts';
import type { SearchIndex } from '../search/search-index.ts';
import type { UserStore } from '../users/user.store.ts';
import { FrontmatterError, parseFrontmatter, withDescription, type SkillFrontmatter } from './frontmatter.ts';
import { MAX_SKILL_MD_BYTES, MAX_SKILLS_PER_OWNER, RAW_MAX_AGE_SEC, type SkillRecord } from './skill.schema.ts';
import type { SkillChanges, SkillStore } from './skill.store.ts';

export interface SkillPorts {
  readonly skills: SkillStore;
  readonly users: UserStore;
  readonly searchIndex: SearchIndex;
  readonly clock: Clock;
}

/** A skill named by id, or by slug (`{owner}/{name}`, or a bare name for one of the caller's own). */
export interface SkillRef {
  readonly skillId?: string | undefined;
  readonly slug?: string | undefined;
}

type Visibility = 'private' | 'public';

/** The owner's alias, or null for an account that has none (skills are created only by accounts that have one). */
async function aliasOf(ownerId: string, ports: Pick<SkillPorts, 'users'>): Promise<string | null> {
  return (await ports.users.get(ownerId))?.alias ?? null;
}

function slugOf(skill: SkillRecord, alias: string | null): string {
  return `${alias ?? skill.ownerId}/${skill.skillName}`;
}

/** SPEC part 2, "Skill"; `skillMd` only where one skill is read. */
export function presentSkill(skill: SkillRecord, alias: string | null, urls: PublicUrls, withText = false) {
  const slug = slugOf(skill, alias);
  return {
    skillId: skill.skillId,
    skillName: skill.skillName,
    fullName: slug,
    description: skill.description,
    slug,
    owner: alias,
    // A name may hold letters of any script (decision 0046): each part encoded, so the URL is one as given.
    rawUrl: `${urls.baseUrl}/skills/s/${slug.split('/').map(encodeURIComponent).join('/')}/SKILL.md`,
    visibility: skill.visibility,
    status: skill.status,
    sizeBytes: skill.sizeBytes,
    createdAt: skill.createdAt,
    updatedAt: skill.updatedAt,
    ...(withText ? { skillMd: skill.skillMd } : {}),
  };
}

function isOwner(actor: Actor, skill: SkillRecord): boolean {
  return actor.kind === 'user' && actor.userId === skill.ownerId;
}

/**
 * Another user's private skill is answered exactly as a missing one (404), on every endpoint, so
 * its existence does not leak.
 */
function assertVisible(actor: Actor, skill: SkillRecord, label: string): void {
  if (skill.visibility !== 'public' && !isOwner(actor, skill)) throw new NotFoundError(`Skill ${label} not found.`);
}

/** Over the size limit is 413; frontmatter problems are 400 naming the problem. */
async function readSkillMd(skillMd: string): Promise<SkillFrontmatter> {
  checkSize(skillMd);
  return asValidationError(() => parseFrontmatter(skillMd));
}

function checkSize(skillMd: string): void {
  const sizeBytes = Buffer.byteLength(skillMd, 'utf8');
  if (sizeBytes > MAX_SKILL_MD_BYTES)
    throw new PayloadTooLargeError(MAX_SKILL_MD_BYTES, `SKILL.md is ${sizeBytes} bytes; the limit is ${MAX_SKILL_MD_BYTES} bytes (256 KB).`);
}

async function asValidationError<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof FrontmatterError) throw new ValidationError('Invalid request body', [error.message]);
    throw error;
  }
}

/**
 * The text to publish: `skillMd` with `description` in its frontmatter, so it is a valid skill for
 * any agent that reads it (the Agent Skills format requires one), with its size and hash.
 */
async function publishedText(skillMd: string, description: string): Promise<{ skillMd: string; sizeBytes: number; sha256: string }> {
  const text = await asValidationError(() => withDescription(skillMd, description));
  checkSize(text);
  return { skillMd: text, sizeBytes: Buffer.byteLength(text, 'utf8'), sha256: sha256Hex(text) };
}

/** What search holds for a skill: public skills with their text; null takes it out. */
function searchEntry(skill: SkillRecord | null, alias: string | null): PublicResource | null {
  if (skill === null || skill.visibility !== 'public') return null;
  return {
    resourceType: 'skill',
    resourceId: skill.skillId,
    name: skill.skillName,
    description: skill.description,
    slug: slugOf(skill, alias),
    owner: alias ?? '',
    ownerId: skill.ownerId,
    body: skill.skillMd,
  };
}

async function loadById(skillId: string, ports: Pick<SkillPorts, 'skills'>): Promise<SkillRecord> {
  const skill = await ports.skills.get(skillId);
  if (skill === null) throw new NotFoundError(`Skill ${skillId} not found.`);
  return skill;
}

async function loadBySlug(owner: string, name: string, ports: Pick<SkillPorts, 'skills' | 'users'>): Promise<SkillRecord> {
  const claim = await ports.users.getAliasClaim(owner);
  const skill = claim === null ? null : await ports.skills.getByName(claim.userId, name);
  if (skill === null) throw new NotFoundError(`Skill ${owner}/${name} not found.`);
  return skill;
}

/** The skill a write names; only its owner may change it (another user's private skill is a 404). */
async function loadOwned(actor: UserActor, ref: SkillRef, ports: Pick<SkillPorts, 'skills' | 'users'>, what: string): Promise<SkillRecord> {
  let skill: SkillRecord;
  let label: string;
  if (ref.skillId !== undefined) {
    skill = await loadById(ref.skillId, ports);
    label = ref.skillId;
  } else {
    const slug = ref.slug ?? '';
    const [owner, name] = slug.includes('/') ? (slug.split('/') as [string, string]) : [actor.alias ?? '', slug];
    label = `${owner}/${name}`;
    if (owner === '') throw new NotFoundError(`Skill ${slug} not found.`);
    skill = await loadBySlug(owner, name, ports);
  }
  assertVisible(actor, skill, label);
  if (!isOwner(actor, skill)) throw new AccessDeniedError(`Only the owner may ${what} skill ${label}.`);
  return skill;
}

/** `POST /skills/create` (SPEC 4.5). */
export async function createSkill(
  actor: Actor,
  input: { skillMd: string; description?: string | undefined; visibility: Visibility },
  ports: SkillPorts,
  urls: PublicUrls,
) {
  const owner = requireAlias(actor);
  const read = await readSkillMd(input.skillMd);
  const description = input.description ?? read.description;
  if (description === null) throw new ValidationError('Invalid request body', ['description: give one in the request or in the SKILL.md frontmatter']);
  const taken = () => new ConflictError(`You already have a skill named "${read.name}".`);
  const atLimit = () => new ConflictError(`An account may own at most ${MAX_SKILLS_PER_OWNER} skills.`);
  const now = ports.clock.now();
  const skill: SkillRecord = {
    skillId: randomUUID(),
    ownerId: owner.userId,
    skillName: read.name,
    description,
    ...(await publishedText(input.skillMd, description)),
    visibility: input.visibility,
    status: 'active',
    createdAt: now,
    updatedAt: now,
  };
  const created = await ports.skills.create(skill);
  if (created === 'name-taken') throw taken();
  if (created === 'limit') throw atLimit();
  await syncResource(ports.searchIndex, 'skill', skill.skillId, searchEntry(skill, owner.alias));
  return Reply.created({ message: `Skill ${owner.alias}/${skill.skillName} created.`, skill: presentSkill(skill, owner.alias, urls) });
}

/**
 * `PUT /skills/update`: only given fields change. A new SKILL.md must keep the skill's name
 * (renaming is delete and create); without a description in the request, the new frontmatter's
 * description (if any) becomes the skill's.
 */
export async function updateSkill(
  actor: UserActor,
  input: SkillRef & { skillMd?: string | undefined; description?: string | undefined; visibility?: Visibility | undefined },
  ports: SkillPorts,
  urls: PublicUrls,
) {
  if (input.skillMd === undefined && input.description === undefined && input.visibility === undefined) {
    throw new ValidationError('Invalid request body', ['request body: give at least one of skillMd, description, visibility']);
  }
  const skill = await loadOwned(actor, input, ports, 'update');
  const changes: { -readonly [K in keyof SkillChanges]: SkillChanges[K] } = {};
  let description = input.description;
  if (input.skillMd !== undefined) {
    const read = await readSkillMd(input.skillMd);
    if (read.name !== skill.skillName) {
      throw new ValidationError('Invalid request body', [
        `skillMd: the frontmatter name "${read.name}" differs from the skill's name "${skill.skillName}"; to rename, delete the skill and create it anew`,
      ]);
    }
    description ??= read.description ?? skill.description;
  }
  if (description !== undefined) {
    // The published text always carries the skill's description (a new text without one gets the old).
    Object.assign(changes, { description }, await publishedText(input.skillMd ?? skill.skillMd, description));
  }
  if (input.visibility !== undefined) changes.visibility = input.visibility;
  const updated = await ports.skills.update(skill.skillId, changes, ports.clock.now());
  if (updated === null) throw new NotFoundError(`Skill ${skill.skillId} not found.`);
  const alias = await aliasOf(updated.ownerId, ports);
  await syncResource(ports.searchIndex, 'skill', updated.skillId, searchEntry(updated, alias));
  return { message: `Skill ${slugOf(updated, alias)} updated.`, skill: presentSkill(updated, alias, urls) };
}

/** `POST /skills/delete`: the record and its name go at once, so the name can be created again. */
export async function deleteSkill(actor: UserActor, ref: SkillRef, ports: SkillPorts) {
  const skill = await loadOwned(actor, ref, ports, 'delete');
  if ((await ports.skills.delete(skill)) === 'busy') throw new ConflictError(`Skill ${skill.skillId} is being changed right now; retry.`);
  await syncResource(ports.searchIndex, 'skill', skill.skillId, null);
  const alias = await aliasOf(skill.ownerId, ports);
  return { message: `Skill ${slugOf(skill, alias)} deleted.`, skillId: skill.skillId, slug: slugOf(skill, alias), deleted: true as const };
}

/**
 * `GET /skills/list`. Without `owner`: anonymous callers and `public` get every owner's public
 * skills; signed-in callers get their own for `all` and `private`. With `owner`: that owner's
 * skills, the private ones only when the caller is that owner.
 */
export async function listSkills(
  actor: Actor,
  query: { visibility: 'all' | 'public' | 'private'; owner?: string | undefined; limit: number; cursor?: string | undefined },
  ports: SkillPorts,
  urls: PublicUrls,
) {
  const request = { limit: query.limit, cursor: query.cursor };
  const empty = { items: [] as SkillRecord[], nextCursor: null };
  let page;
  if (query.owner !== undefined) {
    const claim = await ports.users.getAliasClaim(query.owner);
    const mine = claim !== null && actor.kind === 'user' && actor.userId === claim.userId;
    if (claim === null || (!mine && query.visibility === 'private')) page = empty;
    else
      page = await ports.skills.listByOwner(
        claim.userId,
        { visibility: mine ? (query.visibility === 'all' ? undefined : query.visibility) : 'public' },
        request,
      );
  } else if (query.visibility === 'public' || (actor.kind === 'anonymous' && query.visibility === 'all')) {
    page = await ports.skills.listPublic(request);
  } else if (actor.kind === 'anonymous') {
    page = empty;
  } else {
    page = await ports.skills.listByOwner(actor.userId, { visibility: query.visibility === 'all' ? undefined : query.visibility }, request);
  }
  const unique = [...new Set(page.items.map((s) => s.ownerId))];
  const aliases = new Map(await Promise.all(unique.map(async (id) => [id, await aliasOf(id, ports)] as const)));
  const skills = page.items.map((s) => presentSkill(s, aliases.get(s.ownerId) ?? null, urls));
  return { skills, count: skills.length, nextCursor: page.nextCursor };
}

/** One skill with its SKILL.md, by id; another user's private skill is a 404. */
export async function getSkill(actor: Actor, skillId: string, ports: SkillPorts, urls: PublicUrls) {
  const skill = await loadById(skillId, ports);
  assertVisible(actor, skill, skillId);
  return presentSkill(skill, await aliasOf(skill.ownerId, ports), urls, true);
}

export async function getSkillBySlug(actor: Actor, owner: string, name: string, ports: SkillPorts, urls: PublicUrls) {
  const skill = await loadBySlug(owner, name, ports);
  assertVisible(actor, skill, `${owner}/${name}`);
  return presentSkill(skill, owner, urls, true);
}

/** The one skill a read by id or slug names, or null (never found, or not the caller's to see). */
export async function findVisibleSkill(actor: Actor, skillId: string, ports: Pick<SkillPorts, 'skills'>): Promise<SkillRecord | null> {
  const skill = await ports.skills.get(skillId);
  return skill !== null && (skill.visibility === 'public' || isOwner(actor, skill)) ? skill : null;
}

/** Whether `If-None-Match` names `etag` (a list, weak validators and `*` as HTTP says). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/**
 * The raw SKILL.md, exactly as stored: cacheable for five minutes (by shared caches for public
 * skills, by the owner's client only for private ones), with an ETag so a revalidation is a 304.
 */
export function rawSkill(actor: Actor, skill: SkillRecord, label: string, ifNoneMatch: string | undefined): Reply {
  assertVisible(actor, skill, label);
  const etag = `"${skill.sha256}"`;
  const headers = {
    etag,
    'cache-control': `${skill.visibility === 'public' ? 'public' : 'private'}, max-age=${RAW_MAX_AGE_SEC}`,
    ...(skill.visibility === 'public' ? {} : { vary: 'Authorization' }),
  };
  const contentType = 'text/markdown; charset=utf-8';
  if (matches(ifNoneMatch, etag)) return Reply.raw('', contentType, { status: 304, headers });
  return Reply.raw(skill.skillMd, contentType, { headers });
}

export async function rawSkillById(actor: Actor, skillId: string, ifNoneMatch: string | undefined, ports: SkillPorts): Promise<Reply> {
  return rawSkill(actor, await loadById(skillId, ports), skillId, ifNoneMatch);
}

export async function rawSkillBySlug(actor: Actor, owner: string, name: string, ifNoneMatch: string | undefined, ports: SkillPorts): Promise<Reply> {
  return rawSkill(actor, await loadBySlug(owner, name, ports), `${owner}/${name}`, ifNoneMatch);
}
