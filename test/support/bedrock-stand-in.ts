import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the Bedrock runtime's InvokeModel of Titan Text Embeddings V2, so the
 * real AWS SDK client runs against it. Its vectors are hashed bags of words, with `synonyms`
 * folded together first: texts sharing no word but sharing a meaning are close, as with a real
 * embedding model, which is what hybrid search must show. Requests are kept for assertions.
 */
export interface BedrockStandIn {
  readonly endpoint: string;
  readonly requests: { readonly modelId: string; readonly inputText: string; readonly dimensions: number }[];
  close(): Promise<void>;
}

function hash(word: string): number {
  let h = 2166136261;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function embedLikeTitan(text: string, dimensions: number, synonyms: Readonly<Record<string, string>>): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const word = synonyms[raw] ?? raw;
    vector[hash(word) % dimensions]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

export async function startBedrockStandIn(synonyms: Readonly<Record<string, string>> = {}): Promise<BedrockStandIn> {
  const requests: BedrockStandIn['requests'][number][] = [];
  // HTTP/2 without TLS (prior knowledge), as the Bedrock runtime client speaks HTTP/2 by default.
  const server: Http2Server = createServer((req, res) => {
    const match = /^\/model\/([^/]+)\/invoke$/.exec(req.url ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || match === null || !String(req.headers['authorization'] ?? '').startsWith('AWS4-HMAC-SHA256')) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'not an InvokeModel request' }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { inputText?: string; dimensions?: number };
      const modelId = decodeURIComponent(match[1]!);
      if (typeof body.inputText !== 'string' || body.inputText === '') {
        res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
        res.end(JSON.stringify({ message: 'inputText is required' }));
        return;
      }
      const dimensions = body.dimensions ?? 1024;
      requests.push({ modelId, inputText: body.inputText, dimensions });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ embedding: embedLikeTitan(body.inputText, dimensions, synonyms), inputTextTokenCount: body.inputText.split(/\s+/).length }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
