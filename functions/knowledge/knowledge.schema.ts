import * as z from 'zod';

export const MB = 1024 * 1024;

/** SPEC part 8: direct uploads carry at most 5 MB of file (decoded). */
export const MAX_DIRECT_UPLOAD_BYTES = 5 * MB;
/** SPEC part 8: a presigned upload URL is valid for an hour. */
export const UPLOAD_URL_EXPIRES_SEC = 3600;
/** A download link is handed to a browser right away; a quarter of an hour leaves room for a slow start. */
export const DOWNLOAD_URL_EXPIRES_SEC = 900;
/** SPEC part 8: search answers 5 results unless asked, at most 20. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

const contentType = z
  .string()
  .trim()
  .min(3)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/plain');

export const uploadBody = z.object({
  fileName: z.string().min(1, 'must not be empty'),
  content: z.string(),
  contentType: contentType.optional(),
  folder: z.string().optional(),
  isBase64: z.boolean().default(false),
});

export const uploadUrlBody = z.object({
  fileName: z.string().min(1, 'must not be empty'),
  contentType: contentType.optional(),
  folder: z.string().optional(),
  /** Bytes the client will send: checked now, and signed into the URL so S3 refuses another length. */
  size: z.number().int().min(0).optional(),
});

export const keyBody = z.object({ key: z.string().min(1, 'must not be empty') });

export const listQuery = z.object({
  prefix: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().optional(),
});

export const createFolderBody = z.object({
  folderName: z.string().min(1, 'must not be empty'),
  parentFolder: z.string().optional(),
});

export const searchBody = z.object({
  query: z.string().trim().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'),
  folder: z.string().optional(),
  /** An extension such as pdf, txt or md; a leading dot and upper case are forgiven. */
  fileType: z
    .string()
    .trim()
    .min(1)
    .max(16)
    .transform((s) => s.replace(/^\./, '').toLowerCase())
    .optional(),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
});

/** Megabytes (MiB) as the API shows them: six decimals, about a byte; `storageUsedBytes` is exact. */
export function toMb(bytes: number): number {
  return Math.round((bytes / MB) * 1e6) / 1e6;
}
