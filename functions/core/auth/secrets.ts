import { timingSafeEqual } from 'node:crypto';
import { decodeBase62, encodeBase62, randomBase62, sha256Hex } from '../ids.ts';

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
 * Where a token's record and its account are. A token issued with one carries it, so auth reads
 * both in one BatchGetItem instead of first looking the digest up (ARCHITECTURE "Auth"). It is not
 * a credential: auth still requires the record to hold the token's digest and to name the account.
 */
export interface TokenLocator {
  readonly tokenId: string;
  readonly userId: string;
}

/** `tok_` + the 21 base62 characters of `sortableId`: carried without its prefix. */
const LOCATABLE_TOKEN_ID = /^tok_([0-9A-Za-z]{21})$/;
/** A canonical lower-case UUID (every platform- and Cognito-made user id): carried as 128 bits. */
const LOCATABLE_USER_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;
const TOKEN_ID_LENGTH = 21;
const USER_ID_LENGTH = 22;
const LOCATOR_LENGTH = TOKEN_ID_LENGTH + USER_ID_LENGTH;

function encodeLocator(locator: TokenLocator): string | null {
  const tokenId = LOCATABLE_TOKEN_ID.exec(locator.tokenId)?.[1];
  const userHex = LOCATABLE_USER_ID.exec(locator.userId)?.slice(1).join('');
  if (tokenId === undefined || userHex === undefined) return null;
  return tokenId + encodeBase62(BigInt(`0x${userHex}`), USER_ID_LENGTH);
}

function decodeLocator(text: string): TokenLocator | null {
  const user = decodeBase62(text.slice(TOKEN_ID_LENGTH));
  if (user === null || user >= 1n << 128n) return null;
  const hex = user.toString(16).padStart(32, '0');
  const userId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { tokenId: `tok_${text.slice(0, TOKEN_ID_LENGTH)}`, userId };
}

/**
 * A new secret: prefix + 40 random base62 characters (+ the 43-character locator of a token whose
 * ids have the platform's shapes) + a 6-character CRC32 checksum of all before it. The checksum
 * lets the platform (and secret scanners) reject mistyped or made-up tokens without a lookup.
 */
export function generateSecret(kind: SecretKind, locator?: TokenLocator): string {
  const prefix = SECRET_PREFIX[kind];
  const body = randomBase62(RANDOM_LENGTH) + ((locator && encodeLocator(locator)) ?? '');
  return prefix + body + checksumOf(prefix, body);
}

/**
 * The parts of a well-formed `kind` secret (its locator, or null for one issued without); null
 * when `value` does not have the shape or the checksum of one.
 */
export function readSecret(kind: SecretKind, value: string): { readonly locator: TokenLocator | null } | null {
  const prefix = SECRET_PREFIX[kind];
  const length = value.length - prefix.length - CHECKSUM_LENGTH;
  if (!value.startsWith(prefix) || (length !== RANDOM_LENGTH && length !== RANDOM_LENGTH + LOCATOR_LENGTH)) return null;
  const body = value.slice(prefix.length, prefix.length + length);
  if (!/^[0-9A-Za-z]+$/.test(body) || checksumOf(prefix, body) !== value.slice(prefix.length + length)) return null;
  if (length === RANDOM_LENGTH) return { locator: null };
  const locator = decodeLocator(body.slice(RANDOM_LENGTH));
  return locator === null ? null : { locator };
}

/** True when `value` has the shape and a valid checksum of a `kind` secret. */
export function isWellFormedSecret(kind: SecretKind, value: string): boolean {
  return readSecret(kind, value) !== null;
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
