import * as z from 'zod';

/** Request schemas the file areas (knowledge, websites) share. */

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** A media type such as `text/plain`, as clients give it. */
export const contentType = z
  .string()
  .trim()
  .min(3)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/plain');

/** A folder's listing, a page at a time: `prefix` is the folder, `cursor` the `nextCursor` of the page before. */
export const listQuery = z.object({
  prefix: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().optional(),
});

/** An upload URL's request (SPEC 4.6, 4.11). */
export const uploadUrlBody = z.object({
  fileName: z.string().min(1, 'must not be empty'),
  contentType: contentType.optional(),
  folder: z.string().optional(),
  /** Bytes the client will send, when it knows: checked against the limits now (knowledge also signs it into the URL). */
  size: z.number().int().min(0).optional(),
});

/** A file named by its key. */
export const keyBody = z.object({ key: z.string().min(1, 'must not be empty') });
