/**
 * The knowledge area's pure parts: path checks (what keys a client can name), chunking (overlap,
 * boundaries) and text extraction of the formats that need more than decoding.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError, NotFoundError } from '../../functions/core/errors.ts';
import { chunkText } from '../../functions/search/chunk-text.ts';
import { extractText, fileTypeOf, htmlText, jsonText, textKindOf } from '../../functions/knowledge/extract-text.ts';
import { foldersOf, normaliseFolder, parseStoredKey } from '../../functions/core/files/paths.ts';
import { filePathFromClient, folderFromClient } from '../../functions/knowledge/knowledge-paths.ts';

describe('knowledge paths', () => {
  it('normalises folders to one trailing slash and NFC', () => {
    // Act
    const plain = normaliseFolder('folder', 'a/b');
    const slashed = normaliseFolder('folder', 'a/b/');
    const decomposed = normaliseFolder('folder', 'cafe\u0301');

    // Assess
    expect([plain, slashed, normaliseFolder('folder', undefined), normaliseFolder('folder', '')]).toEqual(['a/b/', 'a/b/', '', '']);
    expect(decomposed).toBe('caf\u00e9/');
    expect(foldersOf('a/b/c/')).toEqual(['a/', 'a/b/', 'a/b/c/']);
  });

  it.each(['..', '../a', 'a/..', 'a/./b', '/a', 'a//b', 'a\\b', 'a\u0000', 'a\u001fb', 'a\u007f', `${'x'.repeat(256)}`])('refuses the folder %j', (folder) => {
    // Act
    const attempt = () => normaliseFolder('folder', folder);

    // Assess
    expect(attempt).toThrow(ValidationError);
  });

  it("reads full keys and relative paths, refusing another user's keys as missing and traversal as invalid", () => {
    // Act
    const full = filePathFromClient('key', 'u1', 'users/u1/a/b.txt');
    const relative = filePathFromClient('key', 'u1', 'a/b.txt');
    const root = folderFromClient('prefix', 'u1', 'users/u1/');

    // Assess
    expect(full).toEqual({ folder: 'a/', fileName: 'b.txt' });
    expect(relative).toEqual(full);
    expect(root).toBe('');
    expect(() => filePathFromClient('key', 'u1', 'users/u2/a/b.txt')).toThrow(NotFoundError);
    expect(() => filePathFromClient('key', 'u1', 'users/u2/../u1/b.txt')).toThrow(ValidationError);
    expect(() => filePathFromClient('key', 'u1', 'users/u1/a/')).toThrow(ValidationError);
    expect(() => folderFromClient('key', 'u1', 'users/u1/../u2/')).toThrow(ValidationError);
  });

  it('parses the keys of stored objects, and nothing it would not make', () => {
    // Assess
    expect(parseStoredKey('incoming/', 'incoming/u1/a/b.txt')).toEqual({ userId: 'u1', path: { folder: 'a/', fileName: 'b.txt' } });
    expect(parseStoredKey('incoming/', 'incoming/u1/../u2/b.txt')).toBeNull();
    expect(parseStoredKey('incoming/', 'incoming/b.txt')).toBeNull();
    expect(parseStoredKey('incoming/', 'other/u1/b.txt')).toBeNull();
  });
});

describe('chunking', () => {
  it('makes overlapping chunks within the size, cut at word boundaries', () => {
    // Prepare
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`);
    const text = words.join(' ');

    // Act
    const chunks = chunkText(text, { size: 300, overlap: 60 });

    // Assess: every chunk fits, starts and ends on whole words, and shares words with the next
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(300);
      for (const word of chunk.split(' ')) expect(words).toContain(word);
    }
    for (let i = 1; i < chunks.length; i++) {
      const previous = new Set(chunks[i - 1]!.split(' '));
      expect(chunks[i]!.split(' ').some((w) => previous.has(w))).toBe(true);
    }
    // Nothing lost: every word appears in some chunk.
    const seen = new Set(chunks.flatMap((c) => c.split(' ')));
    expect(words.every((w) => seen.has(w))).toBe(true);
  });

  it('keeps a short text whole, drops blank text, and cuts a word longer than a chunk', () => {
    // Act
    const short = chunkText('  A short   note.\n\n\n\nSecond paragraph. ');
    const blank = chunkText(' \n\t ');
    const long = chunkText('x'.repeat(1000), { size: 300, overlap: 50 });

    // Assess
    expect(short).toEqual(['A short note.\n\nSecond paragraph.']);
    expect(blank).toEqual([]);
    expect(long.join('').length).toBeGreaterThanOrEqual(1000);
    expect(long.every((c) => c.length <= 300)).toBe(true);
  });

  it('reads text without blanks (base64, minified JSON) in time linear in its length', () => {
    // Prepare: characters the string methods chunking uses go through, counted rather than timed
    const counted = ['slice', 'search', 'charCodeAt', 'matchAll', 'replace', 'trim'] as const;
    const saved = counted.map((name) => [name, String.prototype[name]] as const);
    let work = 0;
    const charactersRead = (size: number) => {
      const text = 'QUJD'.repeat(size / 4);
      work = 0;
      for (const [name, original] of saved)
        (String.prototype as unknown as Record<string, unknown>)[name] = function (this: string, ...args: unknown[]) {
          work += name === 'charCodeAt' ? 1 : name === 'slice' ? 0 : this.length;
          const result = (original as (...a: unknown[]) => unknown).apply(this, args);
          if (name === 'slice') work += (result as string).length;
          return result;
        };
      try {
        return { chunks: chunkText(text).length, work };
      } finally {
        for (const [name, original] of saved) (String.prototype as unknown as Record<string, unknown>)[name] = original;
      }
    };

    // Act
    const oneMb = charactersRead(1 << 20);
    const fourMb = charactersRead(4 << 20);

    // Assess: four times the text is about four times the work (quadratic would be sixteen)
    expect(fourMb.chunks).toBeGreaterThan(3 * oneMb.chunks);
    expect(fourMb.work / oneMb.work).toBeLessThan(5);
  });
});

describe('text extraction', () => {
  it('keeps the visible text of HTML only, entities decoded', () => {
    // Act
    const text = htmlText(
      '<!doctype html><html><head><title>T&amp;C</title><style>p{color:red}</style></head><body><!-- note --><p>Fish&nbsp;&amp;&#32;chips</p><script>alert(1)</script><div>caf&#xe9;</div></body></html>',
    );

    // Assess
    expect(text).toContain('T&C');
    expect(text).toContain('Fish & chips');
    expect(text).toContain('café');
    expect(text).not.toMatch(/color|alert|note|</);
  });

  it('turns JSON into key: value lines, and keeps text that is not JSON as it is', () => {
    // Assess
    expect(jsonText('{"title":"Forecast","tags":["a","b"],"n":{"depth":3}}')).toBe('title: Forecast\ntags: a\ntags: b\ndepth: 3');
    expect(jsonText('{not json')).toBe('{not json');
  });

  it('tells kinds by extension first, then content type', () => {
    // Assess
    expect(textKindOf('a.PDF', 'application/octet-stream')).toBe('pdf');
    expect(textKindOf('notes', 'text/markdown; charset=utf-8')).toBe('markdown');
    expect(textKindOf('photo.png', 'image/png')).toBeNull();
    expect(fileTypeOf('notes', 'markdown')).toBe('md');
    expect(fileTypeOf('Report.Final.TXT', 'text')).toBe('txt');
  });

  it('keeps text up to the character limit and says so', async () => {
    // Act
    const cut = await extractText('text', new TextEncoder().encode('abcdefghij'), { maxPages: 1, maxChars: 4 });

    // Assess
    expect(cut).toEqual({ text: 'abcd', truncated: 'only the first 4 characters of its text are indexed' });
  });

  it('decodes UTF-8 text without its byte-order mark, and reports an unreadable PDF', async () => {
    // Act
    const limits = { maxPages: 10, maxChars: 1000 };
    const text = await extractText('text', new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0xc3, 0xa9]), limits);
    const broken = extractText('pdf', new TextEncoder().encode('%PDF-1.4 not really'), limits);

    // Assess
    expect(text).toEqual({ text: 'hé', truncated: null });
    await expect(broken).rejects.toThrow(/Unreadable PDF/);
  });
});
