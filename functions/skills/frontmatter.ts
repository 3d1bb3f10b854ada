import type * as JsYaml from 'js-yaml';
import { MAX_DESCRIPTION_CHARS, SKILL_NAME_PATTERN } from './skill.schema.ts';

/** What a SKILL.md's frontmatter says about the skill; other keys are kept in the text, not read. */
export interface SkillFrontmatter {
  readonly name: string;
  /** Null when the frontmatter has none (the request must then give one). */
  readonly description: string | null;
}

/** The first problem of a SKILL.md, phrased for the caller; the service turns it into a 400. */
export class FrontmatterError extends Error {}

// `---` on its own line opens the document; the next `---` (or `...`) line closes the YAML.
const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/**
 * The YAML parser (`js-yaml`, about 43 KB minified) is loaded on first use by a specifier the
 * bundler does not follow: it stays out of the function bundle (200 KB budget) and is shipped beside
 * it as runtime files (skills.module.ts), where Node finds it as it does in node_modules locally.
 */
const loadModule = (specifier: string) => import(specifier) as Promise<unknown>;
let yaml: Promise<typeof JsYaml> | undefined;

/** The runtime files the cloud function needs for `js-yaml` (its ESM build is self-contained). */
export const YAML_PARSER_FILES = ['package.json', 'LICENSE', 'dist/js-yaml.mjs'].map((file) => `node_modules/js-yaml/${file}`);

/** The frontmatter keys the Agent Skills format defines; any other is refused, as its reference validator does. */
const ALLOWED_KEYS: ReadonlySet<string> = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools']);
const MAX_NAME_CHARS = 64;
const MAX_COMPATIBILITY_CHARS = 500;

interface ReadFrontmatter extends SkillFrontmatter {
  /** The mapping as YAML read it, for rewriting. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Where the frontmatter's YAML starts and ends in the text. */
  readonly yamlStart: number;
  readonly yamlEnd: number;
}

/**
 * Reads the YAML frontmatter with a real YAML parser (quoted strings, block scalars and comments
 * all mean what YAML says) and checks it by the Agent Skills format's rules, as its reference
 * validator (skills-ref) applies them: only the format's keys; `name` 1 to 64 characters once
 * trimmed and NFKC-normalised, lowercase letters (any script) and digits in hyphen-separated runs;
 * `description` a string of at most 1,024 characters as written; `compatibility` a string of at
 * most 500; `license` a string; `metadata` a map of strings to strings; `allowed-tools` a string
 * or a list of strings. A missing or blank `description` reads as null: the request must then give
 * one, which `withDescription` writes in.
 */
export async function parseFrontmatter(skillMd: string): Promise<SkillFrontmatter> {
  const { name, description } = await readFrontmatter(skillMd);
  return { name, description };
}

async function readFrontmatter(skillMd: string): Promise<ReadFrontmatter> {
  const match = FRONTMATTER.exec(skillMd);
  if (match === null) throw new FrontmatterError('skillMd: must start with YAML frontmatter between "---" lines (with at least a name)');
  const yamlText = match[1] ?? '';
  // The opening line holds no other line end.
  const yamlStart = match[0].indexOf('\n') + 1;
  const { CORE_SCHEMA, load, YAMLException } = await yamlModule();
  let data: unknown;
  try {
    // The core schema: plain data only (no custom types), as YAML 1.2 reads it.
    data = load(yamlText, { schema: CORE_SCHEMA });
  } catch (error) {
    const reason = error instanceof YAMLException ? error.reason : (error as Error).message;
    const line = error instanceof YAMLException ? ` (frontmatter line ${error.mark.line + 1})` : '';
    throw new FrontmatterError(`skillMd: the frontmatter is not valid YAML: ${reason}${line}`);
  }
  if (data === null || data === undefined || typeof data !== 'object' || Array.isArray(data)) {
    throw new FrontmatterError('skillMd: the frontmatter must be a YAML mapping (key: value lines) with at least a name');
  }
  const fields = data as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !ALLOWED_KEYS.has(key));
  if (unknown.length > 0)
    throw new FrontmatterError(
      `skillMd: the frontmatter has keys the Agent Skills format does not define (${unknown.sort().join(', ')}); allowed: ${[...ALLOWED_KEYS].join(', ')} (put your own under metadata)`,
    );
  const name = nameOf(fields['name']);
  checkOptionalFields(fields);
  return { name, description: descriptionOf(fields['description']), fields, yamlStart, yamlEnd: yamlStart + yamlText.length };
}

function nameOf(value: unknown): string {
  if (value === undefined || value === null) throw new FrontmatterError('skillMd: the frontmatter has no name');
  if (typeof value !== 'string') throw new FrontmatterError('skillMd: the frontmatter name must be a string');
  const name = value.trim().normalize('NFKC');
  if (name.length < 1 || name.length > MAX_NAME_CHARS) throw new FrontmatterError('skillMd: the frontmatter name must be 1 to 64 characters');
  if (!isSkillName(name)) {
    throw new FrontmatterError(
      `skillMd: the frontmatter name "${name}" must be lowercase letters and digits separated by single hyphens (no leading or trailing hyphen)`,
    );
  }
  return name;
}

function descriptionOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new FrontmatterError('skillMd: the frontmatter description must be a string');
  // As written, trailing spaces included: the limit is the format's, on the text other agents read.
  if (value.length > MAX_DESCRIPTION_CHARS)
    throw new FrontmatterError(`skillMd: the frontmatter description must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  const trimmed = value.trim();
  return trimmed.length === 0 ? null : trimmed;
}

function checkOptionalFields(fields: Record<string, unknown>): void {
  const has = (key: string) => key in fields;
  const compatibility = fields['compatibility'];
  if (has('compatibility') && (typeof compatibility !== 'string' || compatibility.length > MAX_COMPATIBILITY_CHARS))
    throw new FrontmatterError(`skillMd: the frontmatter compatibility must be a string of at most ${MAX_COMPATIBILITY_CHARS} characters`);
  if (has('license') && typeof fields['license'] !== 'string') throw new FrontmatterError('skillMd: the frontmatter license must be a string');
  const metadata = fields['metadata'];
  if (
    has('metadata') &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== 'string'))
  )
    throw new FrontmatterError('skillMd: the frontmatter metadata must be a map of strings to strings (quote numbers: version: "1.0")');
  const tools = fields['allowed-tools'];
  if (has('allowed-tools') && typeof tools !== 'string' && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string')))
    throw new FrontmatterError('skillMd: the frontmatter allowed-tools must be a string or a list of strings');
}

/**
 * A skill name as the format allows it (after trimming and NFKC): lowercase letters of any script
 * and digits, in runs separated by single hyphens.
 */
export function isSkillName(name: string): boolean {
  return name.length <= MAX_NAME_CHARS && SKILL_NAME_PATTERN.test(name) && name === name.toLowerCase();
}

/**
 * `skillMd` with `description` as its frontmatter's description, so the published file is a valid
 * skill on its own. Unchanged when it already says so; a missing description is added as one line
 * (the rest of the text kept byte for byte); a different one is replaced by writing the frontmatter
 * anew (its comments and layout are then YAML's defaults).
 */
export async function withDescription(skillMd: string, description: string): Promise<string> {
  const read = await readFrontmatter(skillMd);
  if (read.description === description && read.fields['description'] === description) return skillMd;
  const { dump } = await yamlModule();
  const line = `description: ${JSON.stringify(description)}`;
  const yaml = !('description' in read.fields)
    ? `${skillMd.slice(read.yamlStart, read.yamlEnd)}\n${line}`
    : dump({ ...read.fields, description }, { lineWidth: -1, noRefs: true }).trimEnd();
  return `${skillMd.slice(0, read.yamlStart)}${yaml}${skillMd.slice(read.yamlEnd)}`;
}

function yamlModule(): Promise<typeof JsYaml> {
  yaml ??= loadModule('js-yaml') as Promise<typeof JsYaml>;
  return yaml;
}
