import { AccessDeniedError, ValidationError } from '../errors.ts';

/** What the file areas (knowledge, websites) share about uploads and their owners' quotas. */
export const MB = 1024 * 1024;

/** SPEC part 8: direct uploads of the file areas carry at most 5 MB of file (decoded). */
export const MAX_DIRECT_UPLOAD_BYTES = 5 * MB;

/** SPEC part 8: presigned upload URLs of the file areas are valid for an hour. */
export const UPLOAD_URL_EXPIRES_SEC = 3600;

/** A download link is handed to a browser right away; a quarter of an hour leaves room for a slow start. */
export const DOWNLOAD_URL_EXPIRES_SEC = 900;

/** Megabytes (MiB) as the API shows them: six decimals, about a byte; `storageUsedBytes` is exact. */
export function toMb(bytes: number): number {
  return Math.round((bytes / MB) * 1e6) / 1e6;
}

/** 403 `STORAGE_QUOTA_EXCEEDED`, saying how much is used and what the file needs. */
export function storageQuotaExceeded(usedBytes: number, neededBytes: number, quotaMb: number): AccessDeniedError {
  return new AccessDeniedError(
    `Storage quota exceeded: ${toMb(usedBytes)} MB of ${quotaMb} MB used, and this file needs ${toMb(neededBytes)} MB. Delete files to make room.`,
    'STORAGE_QUOTA_EXCEEDED',
  );
}

/** A file's bytes from a JSON body's `content`: UTF-8 text, or base64 checked strictly. */
export function decodeContent(content: string, isBase64: boolean, flag: string): Buffer {
  if (!isBase64) return Buffer.from(content, 'utf8');
  const compact = content.replace(/\s+/g, '');
  // Buffer.from skips what is not base64 without a word; a typo must not store a truncated file.
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length % 4 === 1)
    throw new ValidationError('Invalid parameters', [`content: is not valid base64 (${flag})`]);
  return Buffer.from(compact, 'base64');
}
