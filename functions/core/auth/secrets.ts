import { timingSafeEqual } from 'node:crypto';
import { encodeBase62, randomBase62, sha256Hex } from '../ids.ts';

/** Prefixes of the secrets the platform issues (DESIGN 6). */
export const SECRET_PREFIX = {
  userToken: 'svc_ut_',
  roleToken: 'svc_rt_',
  secretKey: 'svc_sk_',
  embedToken: 'emb_pk_live_',
} as const;

export type SecretKind = keyof typeof SECRET_PREFIX;

const RANDOM_LENGTH = 40;
const CHECKSUM_LENGTH = 6;

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function checksumOf(prefix: string, random: string): string {
  return encodeBase62(BigInt(crc32(prefix + random)), CHECKSUM_LENGTH);
}

/**
 * A new secret: prefix + 40 random base62 characters + a 6-character CRC32 checksum. The checksum
 * lets the platform (and secret scanners) reject mistyped or made-up tokens without a lookup.
 */
export function generateSecret(kind: SecretKind): string {
  const prefix = SECRET_PREFIX[kind];
  const random = randomBase62(RANDOM_LENGTH);
  return prefix + random + checksumOf(prefix, random);
}

/** True when `value` has the shape and a valid checksum of a `kind` secret. */
export function isWellFormedSecret(kind: SecretKind, value: string): boolean {
  const prefix = SECRET_PREFIX[kind];
  if (!value.startsWith(prefix) || value.length !== prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH) return false;
  const body = value.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(body)) return false;
  const random = body.slice(0, RANDOM_LENGTH);
  return checksumOf(prefix, random) === body.slice(RANDOM_LENGTH);
}

/** The only form in which a secret is stored. */
export function digestSecret(value: string): string {
  return sha256Hex(value);
}

/** The non-secret start shown in listings so owners can tell tokens apart. */
export function secretPrefixHint(value: string): string {
  const prefix = Object.values(SECRET_PREFIX).find((p) => value.startsWith(p)) ?? '';
  return value.slice(0, prefix.length + 4);
}

export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
