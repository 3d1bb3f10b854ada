/** One line of a line diff: kept in both, removed from the old text, or added in the new one. */
export interface DiffLine {
  readonly kind: 'same' | 'added' | 'removed';
  readonly text: string;
  /** Its line number in the old text (absent for an added line). */
  readonly oldLine?: number;
  /** Its line number in the new text (absent for a removed line). */
  readonly newLine?: number;
}

/** The largest LCS table (lines × lines of the changed middle) computed: 16 MB of counters. */
const MAX_CELLS = 4_000_000;

/** Lines of a text; a final newline does not make an empty last line. */
export function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A line diff of two texts by their longest common subsequence of lines (the classic dynamic
 * programme, after trimming the lines both share at the start and the end, which is most of a
 * typical change). Removals come before additions where lines were replaced, as `diff -u` shows them.
 */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = linesOf(oldText);
  const b = linesOf(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < start; i++) out.push({ kind: 'same', text: a[i]!, oldLine: i + 1, newLine: i + 1 });

  // lengths[i][j]: the LCS length of a[start+i..endA) and b[start+j..endB), in one flat array.
  const n = endA - start;
  const m = endB - start;
  const width = m + 1;
  if (n * m > MAX_CELLS) {
    // Too large a middle for the table: shown as replaced whole (still a true diff, only not the shortest).
    for (let k = start; k < endA; k++) out.push({ kind: 'removed', text: a[k]!, oldLine: k + 1 });
    for (let k = start; k < endB; k++) out.push({ kind: 'added', text: b[k]!, newLine: k + 1 });
  } else pushMiddle();
  for (let k = 0; k < a.length - endA; k++) out.push({ kind: 'same', text: a[endA + k]!, oldLine: endA + k + 1, newLine: endB + k + 1 });
  return out;

  function pushMiddle(): void {
    const lengths = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lengths[i * width + j] =
          a[start + i] === b[start + j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);

    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) {
        out.push({ kind: 'same', text: a[start + i]!, oldLine: start + i + 1, newLine: start + j + 1 });
        i++;
        j++;
      } else if (i < n && (j >= m || lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!)) {
        out.push({ kind: 'removed', text: a[start + i]!, oldLine: start + i + 1 });
        i++;
      } else {
        out.push({ kind: 'added', text: b[start + j]!, newLine: start + j + 1 });
        j++;
      }
    }
  }
}

/** How many lines a diff adds and removes. */
export function diffStats(diff: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff) {
    if (line.kind === 'added') added++;
    else if (line.kind === 'removed') removed++;
  }
  return { added, removed };
}

/** The sign a line shows before its text, so a change never depends on colour: `+`, `-` or a space. */
export function signOf(kind: DiffLine['kind']): '+' | '-' | ' ' {
  return kind === 'added' ? '+' : kind === 'removed' ? '-' : ' ';
}
