/** How results are printed: tables for people, JSON for scripts (`--json`). */
export interface Output {
  readonly json: boolean;
}

export function printJson(data: unknown): void {
  console.log(JSON.stringify(data, null, 2));
}

/** Colour and bold only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
function styled(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env['NO_COLOR'] ?? '') === '';
}

export function bold(text: string): string {
  return styled(process.stdout) ? `\u001b[1m${text}\u001b[22m` : text;
}

/** `dim` on stderr, for the side notes of a stream (conversation id, tool starts). */
export function dimError(text: string): string {
  return styled(process.stderr) ? `\u001b[2m${text}\u001b[22m` : text;
}

export function redError(text: string): string {
  return styled(process.stderr) ? `\u001b[31m${text}\u001b[39m` : text;
}

/** Aligned columns, widths from the plain text, the header in bold on a terminal. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  console.log(bold(formatRow(header, widths)));
  for (const row of rows) console.log(formatRow(row, widths));
}

/** One row padded to the given widths (a longer cell is kept whole, never cut). */
export function formatRow(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, column) => cell.padEnd(widths[column] ?? 0))
    .join('  ')
    .trimEnd();
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
