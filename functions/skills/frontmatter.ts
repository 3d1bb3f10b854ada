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

/**
 * Reads the YAML frontmatter with a real YAML parser (quoted strings, block scalars and comments
 * all mean what YAML says). `name` must be a valid skill name; `description`, when present, a
 * string of at most 1,024 characters.
 */
export async function parseFrontmatter(skillMd: string): Promise<SkillFrontmatter> {
  const match = FRONTMATTER.exec(skillMd);
  if (match === null) throw new FrontmatterError('skillMd: must start with YAML frontmatter between "---" lines (with at least a name)');
  yaml ??= loadModule('js-yaml') as Promise<typeof JsYaml>;
  const { CORE_SCHEMA, load, YAMLException } = await yaml;
  let data: unknown;
  try {
    // The core schema: plain data only (no custom types), as YAML 1.2 reads it.
    data = load(match[1] ?? '', { schema: CORE_SCHEMA });
  } catch (error) {
    const reason = error instanceof YAMLException ? error.reason : (error as Error).message;
    const line = error instanceof YAMLException ? ` (frontmatter line ${error.mark.line + 1})` : '';
    throw new FrontmatterError(`skillMd: the frontmatter is not valid YAML: ${reason}${line}`);
  }
  if (data === null || data === undefined || typeof data !== 'object' || Array.isArray(data)) {
    throw new FrontmatterError('skillMd: the frontmatter must be a YAML mapping (key: value lines) with at least a name');
  }
  const fields = data as Record<string, unknown>;
  const name = fields['name'];
  if (name === undefined || name === null) throw new FrontmatterError('skillMd: the frontmatter has no name');
  if (typeof name !== 'string') throw new FrontmatterError('skillMd: the frontmatter name must be a string');
  if (name.length < 1 || name.length > 64) throw new FrontmatterError('skillMd: the frontmatter name must be 1 to 64 characters');
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new FrontmatterError(
      `skillMd: the frontmatter name "${name}" must be lowercase letters and digits separated by single hyphens (no leading or trailing hyphen)`,
    );
  }
  const description = fields['description'];
  if (description === undefined || description === null) return { name, description: null };
  if (typeof description !== 'string') throw new FrontmatterError('skillMd: the frontmatter description must be a string');
  const trimmed = description.trim();
  if (trimmed.length === 0) return { name, description: null };
  if (trimmed.length > MAX_DESCRIPTION_CHARS)
    throw new FrontmatterError(`skillMd: the frontmatter description must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  return { name, description: trimmed };
}
