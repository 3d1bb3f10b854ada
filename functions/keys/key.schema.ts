import * as z from 'zod';
import type { SealedSecret } from '../core/secret-box.ts';

export const MAX_KEYS_PER_USER = 100;

/** Service names are case-insensitive (they become `SERVICENAME_KEY`), so they are stored lower-cased. */
export const serviceNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits, "_", "-" or ".", starting with a letter or digit')
  .transform((s) => s.toLowerCase());

export const storeKeyBody = z.object({
  serviceName: serviceNameSchema,
  apiKey: z.string().min(1, 'must not be empty').max(8192, 'must be at most 8192 characters'),
});

export const serviceNameParams = z.object({ serviceName: serviceNameSchema });

/** One stored third-party key. The value exists only sealed. */
export interface KeyRecord {
  readonly userId: string;
  readonly serviceName: string;
  readonly sealed: SealedSecret;
  /** Last four characters, so owners can tell keys apart. */
  readonly hint: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export function keyHint(value: string): string {
  return value.length <= 8 ? '****' : `****${value.slice(-4)}`;
}

/** What listings show: never the value, sealed or not. */
export function publicKey(record: KeyRecord) {
  return { serviceName: record.serviceName, hint: record.hint, createdAt: record.createdAt, updatedAt: record.updatedAt };
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types. Never a key's value.

const epochMs = z.number().describe('Milliseconds since the epoch');

/** A stored key as listings show it (`publicKey`). */
export const keyResponse = z.object({
  serviceName: z.string().describe('Lower-cased; MCP servers read it as `SERVICENAME_KEY`'),
  hint: z.string().describe('`****` and the last four characters of the value, to tell keys apart'),
  createdAt: epochMs,
  updatedAt: epochMs,
});

export const keyStoredResponse = keyResponse.extend({
  replaced: z.boolean().describe('Whether a key of that service name was stored before'),
  message: z.string(),
});
export const keyListResponse = z.object({ keys: z.array(keyResponse), count: z.number().int() });
export const keyCheckResponse = z.object({ serviceName: z.string(), exists: z.boolean() });
export const keyDeletedResponse = z.object({ serviceName: z.string(), deleted: z.boolean(), message: z.string() });
