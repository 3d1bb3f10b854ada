import { describe, expect, it } from 'vitest';
import { diffStats, lineDiff, linesOf, signOf, type DiffLine } from '../../console/pages/mcp/diff.ts';

/** A diff as `diff -u` would print its body: a sign, then the line. */
function printed(diff: readonly DiffLine[]): string[] {
  return diff.map((line) => `${signOf(line.kind)}${line.text}`);
}

describe('console line diff (MCP versions)', () => {
  it('keeps identical texts as they are', () => {
    // Act
    const diff = lineDiff('a\nb\nc\n', 'a\nb\nc\n');
    // Assess
    expect(printed(diff)).toEqual([' a', ' b', ' c']);
    expect(diffStats(diff)).toEqual({ added: 0, removed: 0 });
  });

  it('shows an added line and a removed line with their line numbers', () => {
    // Act
    const diff = lineDiff('one\ntwo\nthree\n', 'one\nthree\nfour\n');
    // Assess
    expect(printed(diff)).toEqual([' one', '-two', ' three', '+four']);
    expect(diff[1]).toEqual({ kind: 'removed', text: 'two', oldLine: 2 });
    expect(diff[2]).toEqual({ kind: 'same', text: 'three', oldLine: 3, newLine: 2 });
    expect(diff[3]).toEqual({ kind: 'added', text: 'four', newLine: 3 });
    expect(diffStats(diff)).toEqual({ added: 1, removed: 1 });
  });

  it('shows a replaced line as its removal, then its addition', () => {
    // Act
    const diff = lineDiff('head\nold body\ntail', 'head\nnew body\ntail');
    // Assess
    expect(printed(diff)).toEqual([' head', '-old body', '+new body', ' tail']);
  });

  it('diffs from and to an empty text', () => {
    // Assess
    expect(printed(lineDiff('', 'x\ny'))).toEqual(['+x', '+y']);
    expect(printed(lineDiff('x\ny\n', ''))).toEqual(['-x', '-y']);
    expect(lineDiff('', '')).toEqual([]);
  });

  it('finds the longest common subsequence, not just the shared ends', () => {
    // Act
    const diff = lineDiff(['a', 'b', 'c', 'd', 'e', 'f'].join('\n'), ['a', 'x', 'c', 'd', 'y', 'f'].join('\n'));
    // Assess
    expect(printed(diff)).toEqual([' a', '-b', '+x', ' c', ' d', '-e', '+y', ' f']);
    expect(diff.filter((l) => l.kind === 'same').map((l) => l.text)).toEqual(['a', 'c', 'd', 'f']);
  });

  it('reads CRLF and LF the same, and a final newline makes no empty line', () => {
    // Assess
    expect(linesOf('a\r\nb\r\n')).toEqual(['a', 'b']);
    expect(linesOf('a\n\n')).toEqual(['a', '']);
    expect(printed(lineDiff('a\r\nb\r\n', 'a\nb'))).toEqual([' a', ' b']);
  });

  it('diffs a few thousand lines quickly enough for a page', () => {
    // Prepare
    const old = Array.from({ length: 2000 }, (_, i) => `line ${i}`);
    const changed = old.map((line, i) => (i % 100 === 0 ? `${line} changed` : line));
    // Act
    const diff = lineDiff(old.join('\n'), changed.join('\n'));
    // Assess
    expect(diffStats(diff)).toEqual({ added: 20, removed: 20 });
    expect(diff.filter((l) => l.kind === 'same')).toHaveLength(1980);
  });

  it('shows a middle too large for the table as replaced whole, still with every line signed', () => {
    // Prepare
    const old = Array.from({ length: 2500 }, (_, i) => `old ${i}`);
    const changed = Array.from({ length: 2500 }, (_, i) => `new ${i}`);
    // Act
    const diff = lineDiff(['same', ...old, 'end'].join('\n'), ['same', ...changed, 'end'].join('\n'));
    // Assess
    expect(diffStats(diff)).toEqual({ added: 2500, removed: 2500 });
    expect(printed(diff)[0]).toBe(' same');
    expect(printed(diff).at(-1)).toBe(' end');
  });
});
