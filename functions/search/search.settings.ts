import * as z from 'zod';
import { TITAN_V2_DIMENSIONS } from './bedrock-embedder.ts';

/** The search area's settings (its module's `settings`). */
export const searchSettings = {
  /** `bedrock`: hybrid search with Titan embeddings (needs AWS credentials that may invoke the model); `none`: lexical only. */
  SEARCH_EMBEDDER: z.enum(['none', 'bedrock']).default('none'),
  EMBEDDING_MODEL_ID: z.string().min(1).default('amazon.titan-embed-text-v2:0'),
  /** 512 keeps nearly all of 1024's retrieval quality at half the stored size (AWS's figures for Titan V2). */
  EMBEDDING_DIMENSIONS: z.coerce
    .number()
    .refine((n): n is (typeof TITAN_V2_DIMENSIONS)[number] => (TITAN_V2_DIMENSIONS as readonly number[]).includes(n), { message: 'must be 256, 512 or 1024' })
    .default(512),
  BEDROCK_REGION: z.string().min(1).optional(),
  /** Another Bedrock runtime endpoint (a stand-in in tests). */
  BEDROCK_ENDPOINT: z.url().optional(),
};

/** The settings as parsed; declared here rather than read from `Config`, which is computed from the area list this module is part of. */
export type SearchSettings = Readonly<z.infer<z.ZodObject<typeof searchSettings>>>;
