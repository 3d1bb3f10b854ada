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
