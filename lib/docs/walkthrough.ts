/**
 * The guide's (docs/guide.md) curl walkthrough is docs/walkthrough.sh, which CI runs (test/integration/walkthrough.test.ts).
 * The script is cut into sections by `# == name` lines; the guide shows each section, except the
 * preamble's plumbing, as the ```sh block right after its `<!-- walkthrough:name -->` marker, in the
 * script's order. `npm run docs:walkthrough` rewrites those blocks and a unit test fails while they
 * differ, so the guide shows exactly the commands CI ran.
 */

/** The script's section that holds plumbing (settings, temporary directory, the curl wrapper), summarised by the guide rather than copied. */
export const PREAMBLE = 'preamble';

const SECTION_LINE = /^# == ([a-z0-9-]+)$/;
const GUIDE_MARKER = /^<!-- walkthrough:([a-z0-9-]+) -->$/;

export interface WalkthroughSection {
  readonly name: string;
  /** The section's lines without its marker, blank lines at either end trimmed. */
  readonly code: string;
}

/** The script's sections in order; the lines before the first marker (its header comment) belong to none. */
export function scriptSections(script: string): WalkthroughSection[] {
  const sections: { name: string; lines: string[] }[] = [];
  for (const line of script.split('\n')) {
    const name = SECTION_LINE.exec(line)?.[1];
    if (name !== undefined) {
      if (sections.some((s) => s.name === name)) throw new Error(`docs/walkthrough.sh has two sections named ${name}`);
      sections.push({ name, lines: [] });
    } else sections.at(-1)?.lines.push(line);
  }
  return sections.map(({ name, lines }) => ({ name, code: lines.join('\n').replace(/^\n+/, '').trimEnd() }));
}

/** The guide's marked blocks in order, with where each block's code starts and ends in `readme`. */
export function readmeBlocks(readme: string): (WalkthroughSection & { readonly start: number; readonly end: number })[] {
  const blocks: (WalkthroughSection & { start: number; end: number })[] = [];
  const lines = readme.split('\n');
  let offset = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const name = GUIDE_MARKER.exec(line)?.[1];
    offset += line.length + 1;
    if (name === undefined) continue;
    if (lines[i + 1] !== '```sh') throw new Error(`docs/guide.md: <!-- walkthrough:${name} --> must be followed directly by a \`\`\`sh block`);
    const start = offset + '```sh\n'.length;
    const close = readme.indexOf('\n```\n', start - 1);
    if (close < 0) throw new Error(`docs/guide.md: the block after <!-- walkthrough:${name} --> is not closed`);
    const end = close + 1;
    blocks.push({ name, code: readme.slice(start, end).trimEnd(), start, end });
  }
  return blocks;
}

/**
 * `readme` with every marked block replaced by its script section. Refuses a guide whose markers
 * are not the script's sections (all but the preamble) in the script's order, rather than leave a
 * section out or show the commands in an order that was never run.
 */
export function withWalkthroughBlocks(readme: string, script: string): string {
  const sections = scriptSections(script).filter((s) => s.name !== PREAMBLE);
  const blocks = readmeBlocks(readme);
  const expected = sections.map((s) => s.name).join(', ');
  const found = blocks.map((b) => b.name).join(', ');
  if (expected !== found) {
    throw new Error(
      `docs/guide.md's walkthrough markers (<!-- walkthrough:name -->) must be the script's sections in its order: ${expected}; found: ${found || 'none'}`,
    );
  }
  let result = readme;
  // From the end, so the earlier blocks' offsets stay valid.
  for (const [i, block] of [...blocks.entries()].reverse()) {
    result = `${result.slice(0, block.start)}${sections[i]!.code}\n${result.slice(block.end)}`;
  }
  return result;
}
