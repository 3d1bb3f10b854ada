/** Hostile inputs of issue 30, made in code: the integration tests and the bench share them. */
import { deflateSync } from 'node:zlib';

/**
 * A PDF of `pages` pages that all draw one FlateDecode content stream of `linesPerPage` lines of
 * text, written by hand: kilobytes that expand to `pages` times the stream's megabytes when read.
 */
export function pdfBomb(pages: number, linesPerPage: number): Buffer {
  const line = `BT /F1 1 Tf 0 0 Td (${'bomb '.repeat(40)}) Tj ET\n`;
  const content = deflateSync(Buffer.from(line.repeat(linesPerPage), 'latin1'), { level: 9 });
  const kids = Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ');
  const head: (string | Buffer)[][] = [
    [`<< /Type /Catalog /Pages 2 0 R >>`],
    [`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`],
    [`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`, content, '\nendstream'],
    ['<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'],
  ];
  const pageObjects = Array.from({ length: pages }, () => [
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>',
  ]);
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  const push = (piece: string | Buffer) => {
    const bytes = typeof piece === 'string' ? Buffer.from(piece, 'latin1') : piece;
    parts.push(bytes);
    length += bytes.length;
  };
  [...head, ...pageObjects].forEach((body, i) => {
    offsets.push(length);
    push(`${i + 1} 0 obj\n`);
    for (const piece of body) push(piece);
    push('\nendobj\n');
  });
  const xref = length;
  const count = head.length + pageObjects.length + 1;
  push(`xref\n0 ${count}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`);
  push(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** Text without a blank, as base64 or minified JSON is: `bytes` characters of base64 of pseudo-random bytes. */
export function blankFreeText(bytes: number): string {
  const raw = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  let seed = 7;
  for (let i = 0; i < raw.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = seed >> 16;
  }
  return raw.toString('base64').slice(0, bytes);
}
