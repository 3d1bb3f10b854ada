import * as z from 'zod';

/** SKILL.md above this many bytes is refused with 413 (the limit; SPEC part 8 leaves it open). */
export const MAX_SKILL_MD_BYTES = 256 * 1024;
/** Per-owner limit, as for agents and MCP servers (SPEC leaves it open). */
export const MAX_SKILLS_PER_OWNER = 500;
export const MAX_DESCRIPTION_CHARS = 1024;
/** Raw SKILL.md responses may be cached this long (SPEC 4.5: a 5-minute cache header). */
export const RAW_MAX_AGE_SEC = 300;

/**
 * SPEC part 8 and the Agent Skills format: lowercase alphanumerics and single hyphens, 1 to 64
 * characters; letters of any script, as the format's reference validator allows (lowercase is
 * checked apart: `isSkillName` in frontmatter.ts).
 */
export const SKILL_NAME_PATTERN = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*$/u;
export const skillNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(SKILL_NAME_PATTERN, 'must be lowercase letters and digits separated by single hyphens (no leading or trailing hyphen)')
  .refine((name) => name === name.toLowerCase(), 'must be lowercase');

export const skillIdSchema = z.uuid({ error: 'must be a skill id (UUID)' });
const visibilitySchema = z.enum(['private', 'public']);
const descriptionSchema = z.string().trim().min(1, 'must not be empty').max(MAX_DESCRIPTION_CHARS, `must be at most ${MAX_DESCRIPTION_CHARS} characters`);
/** The size limit is checked by the service (413), not here (400). */
const skillMdSchema = z.string().min(1, 'must not be empty');
/** `{alias}/{name}`, or a bare name for one of the caller's own skills. */
const slugSchema = z
  .string()
  .max(200)
  .regex(/^(?:[A-Za-z0-9_-]{1,64}\/)?[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*$/u, 'must be {owner}/{name} or the name of one of your skills');

export const createSkillBody = z.object({
  skillMd: skillMdSchema,
  description: descriptionSchema.optional(),
  visibility: visibilitySchema.default('public'),
});

/** Names one skill by id or by slug (exactly one). */
const skillRef = { skillId: skillIdSchema.optional(), slug: slugSchema.optional() };
const oneRef = (r: { skillId?: string | undefined; slug?: string | undefined }) => (r.skillId === undefined) !== (r.slug === undefined);
const oneRefMessage = { message: 'give exactly one of skillId or slug', path: ['skillId'] };

export const updateSkillBody = z
  .object({ ...skillRef, skillMd: skillMdSchema.optional(), description: descriptionSchema.optional(), visibility: visibilitySchema.optional() })
  .refine(oneRef, oneRefMessage);

export const skillRefBody = z.object(skillRef).refine(oneRef, oneRefMessage);

export const skillIdParams = z.object({ skillId: skillIdSchema });
export const slugParams = z.object({ owner: z.string().min(1).max(64), slug: skillNameSchema });

export const listSkillsQuery = z.object({
  visibility: z.enum(['all', 'public', 'private']).default('all'),
  /** An owner's alias: only that owner's skills (public ones, unless the caller is that owner). */
  owner: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

/** A stored skill (SPEC part 2, "Skill"); `ownerId` is the tenant, the slug `{owner alias}/{skillName}`. */
export interface SkillRecord {
  readonly skillId: string;
  readonly ownerId: string;
  readonly skillName: string;
  readonly description: string;
  readonly skillMd: string;
  /** SHA-256 (hex) of skillMd: the raw endpoint's ETag. */
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly visibility: 'private' | 'public';
  readonly status: 'active';
  /** Present only on public skills: the sparse `publicSkills` index lists them without a Scan. */
  readonly publicListing?: 'public';
  readonly createdAt: number;
  readonly updatedAt: number;
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** SPEC part 2, "Skill", as every read answers it; `skillMd` only where one skill is read. */
export const skillResponse = z.object({
  skillId: z.string(),
  skillName: z.string(),
  fullName: z.string().describe('`{owner}/{skillName}`'),
  description: z.string(),
  slug: z.string(),
  owner: z.string().nullable(),
  rawUrl: z.string().describe('Where the SKILL.md itself is served'),
  visibility: visibilitySchema,
  status: z.literal('active'),
  sizeBytes: z.number().int(),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  updatedAt: z.number().describe('Milliseconds since the epoch'),
  skillMd: z.string().optional(),
});

export const skillChangedResponse = z.object({ message: z.string(), skill: skillResponse });
export const skillDeletedResponse = z.object({ message: z.string(), skillId: z.string(), slug: z.string(), deleted: z.literal(true) });
export const skillListResponse = z.object({ skills: z.array(skillResponse), count: z.number().int(), nextCursor: z.string().nullable() });
