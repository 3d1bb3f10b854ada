import * as z from 'zod';
import { contentType } from '../core/files/schemas.ts';
export { keyBody, listQuery, uploadUrlBody } from '../core/files/schemas.ts';

export const uploadBody = z.object({
  fileName: z.string().min(1, 'must not be empty'),
  content: z.string(),
  contentType: contentType.optional(),
  folder: z.string().optional(),
  encoding: z.enum(['text', 'base64']).default('text'),
});

export const folderBody = z.object({ folder: z.string().min(1, 'must not be empty') });

export const createFolderBody = z.object({
  folder: z.string().min(1, 'must not be empty'),
  parent: z.string().optional(),
});

/** CloudFront accepts up to 3,000 paths in progress; one request may ask for this many. */
export const MAX_INVALIDATION_PATHS = 100;

export const invalidateBody = z.object({
  paths: z
    .array(z.string().min(1, 'must not be empty').max(1024))
    .min(1, 'must name at least one path')
    .max(MAX_INVALIDATION_PATHS, `at most ${MAX_INVALIDATION_PATHS} paths per request`)
    .default(['/*']),
});
