/** SKILL.md frontmatter as YAML reads it: what is accepted, and the problem each refusal names. */
import { describe, expect, it } from 'vitest';
import { FrontmatterError, parseFrontmatter } from '../../functions/skills/frontmatter.ts';

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
