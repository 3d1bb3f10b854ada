import * as z from 'zod';
import { TITAN_V2_DIMENSIONS } from './bedrock-embedder.ts';

/** The search area's settings (its module's `settings`). */
export const searchSettings = {
  SEARCH_EMBEDDER: z.enum(['none', 'bedrock']).default('none').meta({
    description:
      '`bedrock`: hybrid search with Amazon Titan Text Embeddings V2 (needs AWS credentials that may invoke it); `none`: lexical (BM25). In the cloud, `bedrock` when the `embeddingModel` deploy option is set',
    deployOption: 'embeddingModel',
  }),
  EMBEDDING_MODEL_ID: z
    .string()
    .min(1)
    .default('amazon.titan-embed-text-v2:0')
    .meta({ description: 'The Bedrock embedding model hybrid search uses', deployOption: 'embeddingModel' }),
  // 512 keeps nearly all of 1024's retrieval quality at half the stored size (AWS's figures for Titan V2).
  EMBEDDING_DIMENSIONS: z.coerce
    .number()
    .refine((n): n is (typeof TITAN_V2_DIMENSIONS)[number] => (TITAN_V2_DIMENSIONS as readonly number[]).includes(n), { message: 'must be 256, 512 or 1024' })
    .default(512)
    .meta({ description: "The embeddings' vector size: 256, 512 or 1024", deployOption: 'embeddingDimensions' }),
  BEDROCK_REGION: z.string().min(1).optional().meta({ description: 'The region of the Bedrock embedding model', whenUnset: '`AWS_REGION`' }),
  BEDROCK_ENDPOINT: z.url().optional().describe('Another Bedrock runtime endpoint, e.g. a stand-in (the tests use one)'),
};

/** The settings as parsed; declared here rather than read from `Config`, which is computed from the area list this module is part of. */
export type SearchSettings = Readonly<z.infer<z.ZodObject<typeof searchSettings>>>;
