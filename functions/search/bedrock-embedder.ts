import type { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import * as z from 'zod';
import type { Embedder } from './search-index.ts';

/** Amazon Titan Text Embeddings V2: the dimensions it can return. */
export const TITAN_V2_DIMENSIONS = [256, 512, 1024] as const;

export interface BedrockEmbedderOptions {
  readonly modelId: string;
  readonly dimensions: (typeof TITAN_V2_DIMENSIONS)[number];
  readonly region: string;
  /** A Bedrock runtime endpoint other than AWS's (tests use a loopback stand-in). */
  readonly endpoint?: string;
  /** InvokeModel calls in flight at once for one `embed`. @default 4 */
  readonly concurrency?: number;
}

const answer = z.object({ embedding: z.array(z.number()) });

/** Titan takes at most 50,000 characters (8,192 tokens) per text; the rest of a longer text is not embedded. */
const MAX_INPUT_CHARS = 50_000;

/**
 * Titan Text Embeddings V2 through Bedrock's InvokeModel, one text per call (the model has no
 * batch form), normalised vectors so cosine similarity is a dot product. The AWS SDK finds
 * credentials as usual: the function's role in the cloud, the environment or profile locally.
 */
export function createBedrockEmbedder(options: BedrockEmbedderOptions): Embedder {
  // The SDK client (with its event-stream and WebSocket middleware) is loaded on the first embedding,
  // not when a process that may never embed starts (every local start, most functions' cold starts).
  let sdk: Promise<{ client: BedrockRuntimeClient; InvokeModelCommand: typeof InvokeModelCommand }> | null = null;
  const loaded = () =>
    (sdk ??= import('@aws-sdk/client-bedrock-runtime').then(({ BedrockRuntimeClient, InvokeModelCommand }) => ({
      client: new BedrockRuntimeClient({ region: options.region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) }),
      InvokeModelCommand,
    })));
  const concurrency = options.concurrency ?? 4;

  async function embedOne(text: string): Promise<Float32Array> {
    const { client, InvokeModelCommand } = await loaded();
    const out = await client.send(
      new InvokeModelCommand({
        modelId: options.modelId,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify({ inputText: text.slice(0, MAX_INPUT_CHARS), dimensions: options.dimensions, normalize: true }),
      }),
    );
    const parsed = answer.safeParse(JSON.parse(new TextDecoder().decode(out.body)));
    if (!parsed.success || parsed.data.embedding.length !== options.dimensions)
      throw new Error(`${options.modelId} answered no ${options.dimensions}-dimension embedding`);
    return Float32Array.from(parsed.data.embedding);
  }

  return {
    model: options.modelId,
    dimensions: options.dimensions,
    async embed(texts) {
      const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
      let next = 0;
      const worker = async () => {
        while (next < texts.length) {
          const i = next++;
          vectors[i] = await embedOne(texts[i]!);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, texts.length) }, worker));
      return vectors;
    },
  };
}
