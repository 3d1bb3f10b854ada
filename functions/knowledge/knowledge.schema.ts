import * as z from 'zod';
import { contentType } from '../core/files/schemas.ts';
export { keyBody, listQuery, uploadUrlBody } from '../core/files/schemas.ts';

/** SPEC part 8: search answers 5 results unless asked, at most 20. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;

export const uploadBody = z.object({
  fileName: z.string().min(1, 'must not be empty'),
  content: z.string(),
  contentType: contentType.optional(),
  folder: z.string().optional(),
  isBase64: z.boolean().default(false),
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

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const storageUsage = { storageUsedMb: z.number(), storageQuotaMb: z.number(), storageUsedBytes: z.number().int() };
const indexStatus = z.string().describe('`indexed`, `truncated`, `failed`, `pending` or `rejected`');

export const uploadResponse = z.object({
  key: z.string(),
  fileName: z.string(),
  size: z.number().int(),
  contentType: z.string(),
  ...storageUsage,
  indexStatus,
  indexMessage: z.string().optional(),
});

export const uploadUrlResponse = z.object({
  uploadUrl: z.string().describe('PUT the file here, with the `headers` below'),
  method: z.literal('PUT'),
  headers: z.object({ 'content-type': z.string(), 'content-length': z.string().optional() }).describe('Send these headers with the PUT: the URL signs them'),
  key: z.string(),
  contentType: z.string(),
  expiresIn: z.number().int().describe('Seconds'),
  maxSize: z.number().int().describe('Bytes'),
});

export const downloadUrlResponse = z.object({ downloadUrl: z.string(), key: z.string(), expiresIn: z.number().int() });

export const listResponse = z.object({
  files: z.array(
    z.object({
      key: z.string(),
      fileName: z.string(),
      size: z.number().int(),
      contentType: z.string(),
      lastModified: z.string(),
      indexStatus,
      indexMessage: z.string().optional(),
      rejectedReason: z.string().optional(),
    }),
  ),
  folders: z.array(z.object({ key: z.string(), fileName: z.string() })),
  prefix: z.string(),
  nextCursor: z.string().nullable(),
  ...storageUsage,
});

export const deleteResponse = z.object({ key: z.string(), deleted: z.boolean() });
export const folderResponse = z.object({ key: z.string() });
export const deleteFolderResponse = z.object({ key: z.string(), deletedCount: z.number().int() });

export const searchResponse = z.object({
  results: z.array(z.object({ fileName: z.string(), chunk: z.string(), score: z.number(), key: z.string() })),
  query: z.string(),
  count: z.number().int(),
  mode: z.string().describe('How the index matched: `lexical` or `semantic`'),
});
