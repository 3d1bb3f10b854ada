import * as z from 'zod';
import { contentType } from '../core/files/schemas.ts';
import { uploadUrlBody as fileUploadUrlBody } from '../core/files/schemas.ts';
export { keyBody, listQuery } from '../core/files/schemas.ts';

/**
 * SPEC 4.11's upload URL: a plain `PUT` of the file to `uploadUrl` (the URL signs its content type,
 * and its length when `size` is given), or, for a client that asks with `method: "POST"`, a
 * presigned form POST whose policy also caps the size at 25 MB.
 */
export const uploadUrlBody = fileUploadUrlBody.extend({
  method: z.enum(['PUT', 'POST']).default('PUT').describe('How the file will be sent: `PUT` (default) the file as the body, `POST` a form with `fields`'),
});

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

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const tier = z.string().describe("The owner's tier: `free`, `starter` or `professional`");

export const uploadResponse = z.object({ message: z.string(), key: z.string(), size: z.number().int(), contentType: z.string(), url: z.string().nullable() });

const uploadUrlCommon = {
  key: z.string(),
  contentType: z.string(),
  expiresIn: z.number().int().describe('Seconds'),
  maxSize: z.number().int().describe('Bytes'),
  siteUrl: z.string().nullable(),
};

/** SPEC 4.11's answer, with how to send the file: a PUT (default) or, when asked for, a form POST. */
export const uploadUrlResponse = z.discriminatedUnion('method', [
  z.object({
    uploadUrl: z.string().describe('PUT the file here, with the `headers` below'),
    method: z.literal('PUT'),
    headers: z.object({ 'content-type': z.string(), 'content-length': z.string().optional() }),
    ...uploadUrlCommon,
  }),
  z.object({
    uploadUrl: z.string().describe('POST a multipart form here: the `fields`, then the file as `file`'),
    method: z.literal('POST'),
    fields: z.record(z.string(), z.string()),
    ...uploadUrlCommon,
  }),
]);

export const downloadUrlResponse = z.object({ downloadUrl: z.string(), key: z.string(), expiresIn: z.number().int() });

export const listResponse = z.object({
  files: z.array(
    z.object({ key: z.string(), fileName: z.string(), size: z.number().int(), contentType: z.string(), lastModified: z.string(), type: z.literal('file') }),
  ),
  folders: z.array(z.object({ key: z.string(), fileName: z.string(), type: z.literal('folder') })),
  prefix: z.string(),
  nextCursor: z.string().nullable(),
  storageUsedMb: z.number(),
  storageQuotaMb: z.number(),
  tier,
});

export const deleteResponse = z.object({ key: z.string(), deleted: z.boolean() });
export const folderResponse = z.object({ key: z.string() });
export const deleteFolderResponse = z.object({ folder: z.string(), deletedCount: z.number().int() });
export const usageResponse = z.object({ storageUsedMb: z.number(), storageQuotaMb: z.number(), percentUsed: z.number(), tier });

export const infoResponse = z.object({
  siteUrl: z.string().nullable(),
  alias: z.string().nullable(),
  hasIndexHtml: z.boolean(),
  fileCount: z.number().int(),
  storageUsedMb: z.number(),
  status: z.enum(['published', 'not_published']),
});

export const invalidateResponse = z.object({
  invalidationId: z.string(),
  status: z.string(),
  paths: z.array(z.string()),
  creditsCharged: z.number(),
});
