import { createHash, randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function encodeBase62(value: bigint, width: number): string {
  let out = '';
  let v = value;
  while (v > 0n) {
    out = BASE62[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out.padStart(width, '0');
}

/** The value `encodeBase62` wrote; null when `text` holds a character outside base62. */
export function decodeBase62(text: string): bigint | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE62.indexOf(char);
    if (digit < 0) return null;
    value = value * 62n + BigInt(digit);
  }
  return value;
}

/** Id whose lexical order follows creation time: 9 base62 chars of milliseconds, then randomness. */
export function sortableId(prefix: string, nowMs: number): string {
  return `${prefix}${encodeBase62(BigInt(nowMs), 9)}${randomBase62(12)}`;
}

export function uuid(): string {
  return randomUUID();
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
