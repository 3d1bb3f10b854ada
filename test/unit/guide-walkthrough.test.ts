/**
 * The guide's (docs/guide.md) curl walkthrough blocks are the sections of docs/walkthrough.sh, which CI runs
 * (test/integration/walkthrough.test.ts), so the guide shows only commands that worked, in the
 * order they ran.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { PREAMBLE, readmeBlocks, scriptSections, withWalkthroughBlocks } from '../../lib/docs/walkthrough.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe("the guide's walkthrough", () => {
  it('shows every section of docs/walkthrough.sh but the preamble, in order, as written (npm run docs:walkthrough rewrites it)', async () => {
    // Prepare
    const [readme, script] = await Promise.all([read('docs/guide.md'), read('docs/walkthrough.sh')]);
    // Act
    const shown = readmeBlocks(readme).map(({ name, code }) => ({ name, code }));
    const written = scriptSections(script).filter((s) => s.name !== PREAMBLE);
    // Assess: block by block, so a failure shows the section that differs
    expect(shown, 'docs/guide.md walkthrough is stale: run npm run docs:walkthrough').toEqual(written);
    expect(withWalkthroughBlocks(readme, script)).toBe(readme);
  });

  it('holds every curl command of the script outside its preamble', async () => {
    // Prepare
    const script = await read('docs/walkthrough.sh');
    // Act
    const preamble = scriptSections(script).find((s) => s.name === PREAMBLE)?.code ?? '';
    // Assess: the preamble's only curl is the wrapper, which the guide describes
    expect(preamble.match(/^\s*(?:EXPECT=\S+ |\w+=\$\()?curl /gm) ?? []).toEqual([]);
  });

  const script = ['#!/usr/bin/env bash', '# == preamble', 'set -e', '# == one', '', 'curl $BASE/a', '', '# == two', 'curl $BASE/b', ''].join('\n');

  it('replaces each marked block with its section and leaves the prose alone', () => {
    // Prepare
    const readme = [
      '# Title',
      'Prose one.',
      '<!-- walkthrough:one -->',
      '```sh',
      'curl $BASE/old',
      '```',
      'Prose two.',
      '<!-- walkthrough:two -->',
      '```sh',
      '```',
      'End.',
      '',
    ].join('\n');
    // Act
    const updated = withWalkthroughBlocks(readme, script);
    // Assess
    expect(updated).toBe(
      [
        '# Title',
        'Prose one.',
        '<!-- walkthrough:one -->',
        '```sh',
        'curl $BASE/a',
        '```',
        'Prose two.',
        '<!-- walkthrough:two -->',
        '```sh',
        'curl $BASE/b',
        '```',
        'End.',
        '',
      ].join('\n'),
    );
  });

  it('refuses a guide that leaves out a section or shows them in another order', () => {
    // Prepare
    const block = (name: string) => `<!-- walkthrough:${name} -->\n\`\`\`sh\n\`\`\`\n`;
    // Act / Assess
    expect(() => withWalkthroughBlocks(block('one'), script)).toThrow(/one, two; found: one$/);
    expect(() => withWalkthroughBlocks(block('two') + block('one'), script)).toThrow(/found: two, one/);
    expect(() => withWalkthroughBlocks('<!-- walkthrough:one -->\nno block\n', script)).toThrow(/followed directly by a ```sh block/);
  });
});
