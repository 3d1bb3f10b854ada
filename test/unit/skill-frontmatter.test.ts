/** SKILL.md frontmatter as YAML reads it: what is accepted, and the problem each refusal names. */
import { describe, expect, it } from 'vitest';
import { FrontmatterError, parseFrontmatter, withDescription } from '../../functions/skills/frontmatter.ts';

describe('SKILL.md frontmatter', () => {
  it('reads quoted values, block scalars, comments, CRLF line ends and a byte order mark as YAML does', async () => {
    expect(await parseFrontmatter('---\nname: "pdf-tools"   # the id\ndescription: >\n  Fill and\n  merge forms\nlicense: MIT\n---\nbody')).toEqual({
      name: 'pdf-tools',
      description: 'Fill and merge forms',
    });
    expect(await parseFrontmatter('\uFEFF---\r\nname: crlf-skill\r\ndescription: Windows\r\n---\r\n# body\r\n')).toEqual({
      name: 'crlf-skill',
      description: 'Windows',
    });
    expect(await parseFrontmatter('---\nname: no-body\n---')).toEqual({ name: 'no-body', description: null });
  });

  it.each([
    ['text without frontmatter', '# Title\n', 'must start with YAML frontmatter'],
    ['an unclosed frontmatter', '---\nname: open\n', 'must start with YAML frontmatter'],
    ['a list instead of a mapping', '---\n- name\n---\n', 'must be a YAML mapping'],
    ['a number as the name', '---\nname: 42\n---\n', 'name must be a string'],
    ['an uppercase name', '---\nname: PdfTools\n---\n', 'lowercase letters and digits'],
    ['a trailing hyphen', '---\nname: tools-\n---\n', 'lowercase letters and digits'],
    ['a description that is a list', '---\nname: ok\ndescription: [a, b]\n---\n', 'description must be a string'],
    ['duplicate keys', '---\nname: a\nname: b\n---\n', 'not valid YAML'],
    ['a YAML tag of another type', '---\nname: !!js/function "x"\n---\n', 'not valid YAML'],
  ])('refuses %s', async (_case, text, problem) => {
    const parsed = parseFrontmatter(text);
    await expect(parsed).rejects.toBeInstanceOf(FrontmatterError);
    await expect(parsed).rejects.toThrow(problem);
  });
});

/**
 * The cases where the Agent Skills format's reference validator (skills-ref: only its keys; name
 * trimmed and NFKC-normalised, lowercase letters of any script; description at most 1,024
 * characters as written; compatibility a string of at most 500; metadata a map of strings;
 * allowed-tools a string or a list of strings) disagreed with this parser.
 */
describe('SKILL.md frontmatter by the Agent Skills format', () => {
  it.each([
    ['a compatibility of 501 characters', `---\nname: ok\ncompatibility: ${'c'.repeat(501)}\n---\n`, 'compatibility must be a string of at most 500'],
    ['a compatibility that is a number', '---\nname: ok\ncompatibility: 5\n---\n', 'compatibility must be a string'],
    ['metadata that is a list', '---\nname: ok\nmetadata: [a, b]\n---\n', 'metadata must be a map of strings'],
    ['metadata with a number', '---\nname: ok\nmetadata:\n  version: 1.0\n---\n', 'metadata must be a map of strings'],
    ['allowed-tools that is a number', '---\nname: ok\nallowed-tools: 5\n---\n', 'allowed-tools must be a string or a list of strings'],
    ['an unknown top-level key', '---\nname: ok\nversion: "1"\n---\n', 'keys the Agent Skills format does not define (version)'],
    ['a license that is a list', '---\nname: ok\nlicense: [MIT]\n---\n', 'license must be a string'],
    ['a description of 1,024 characters and trailing spaces', `---\nname: ok\ndescription: "${'d'.repeat(1024)}  "\n---\n`, 'at most 1024 characters'],
    ['an uppercase Unicode name', '---\nname: Ünïcode\n---\n', 'lowercase letters and digits'],
  ])('refuses %s', async (_case, text, problem) => {
    const parsed = parseFrontmatter(text);
    await expect(parsed).rejects.toBeInstanceOf(FrontmatterError);
    await expect(parsed).rejects.toThrow(problem);
  });

  it('accepts what the format allows: lowercase letters of any script, a quoted name with spaces around it, every optional key', async () => {
    // Act
    const unicode = await parseFrontmatter('---\nname: données-ünïcode-日本\ndescription: x\n---\n');
    const quoted = await parseFrontmatter('---\nname: "  spaced-name  "\ndescription: x\n---\n');
    const full = await parseFrontmatter(
      '---\nname: full\ndescription: d\nlicense: MIT\ncompatibility: Requires git\nmetadata:\n  author: me\n  version: "1.0"\nallowed-tools: [Read, Bash]\n---\n',
    );
    // Assess
    expect(unicode.name).toBe('données-ünïcode-日本');
    expect(quoted.name).toBe('spaced-name');
    expect(full).toEqual({ name: 'full', description: 'd' });
  });

  it('writes a description into the frontmatter: a missing one as one more line, a different one by writing the frontmatter anew', async () => {
    // Prepare
    const missing = '---\nname: no-desc # kept\n---\n# Body\n';
    const other = '---\nname: other\ndescription: old\n---\nbody\n';
    // Act
    const added = await withDescription(missing, 'From: the request');
    const replaced = await withDescription(other, 'new one');
    const same = await withDescription(other, 'old');
    // Assess
    expect(added).toBe('---\nname: no-desc # kept\ndescription: "From: the request"\n---\n# Body\n');
    expect(await parseFrontmatter(added)).toEqual({ name: 'no-desc', description: 'From: the request' });
    expect(await parseFrontmatter(replaced)).toEqual({ name: 'other', description: 'new one' });
    expect(replaced.endsWith('\n---\nbody\n')).toBe(true);
    expect(same).toBe(other);
  });
});
