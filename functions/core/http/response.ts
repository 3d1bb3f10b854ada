import { CORS_EXPOSED_HEADERS } from '../../../lib/manifest/http.ts';

// Apart from pipeline.ts so the fallback function, which answers 404 and 405 without running a
// route, does not bundle the pipeline: its imports reach the stores, the SDK clients and zod.

export interface HttpResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly isBase64Encoded: boolean;
}

/**
 * Headers every API response carries. Bearer credentials are never cookies, so `*` is safe for CORS.
 * `nosniff`: many responses carry what users wrote (a raw SKILL.md, a challenge echoed back), and a
 * browser must take them as the type they are sent with, never sniff them into HTML or script.
 */
export function commonHeaders(requestId: string): Record<string, string> {
  return {
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
  };
}

export function json(statusCode: number, body: unknown, headers: Record<string, string>): HttpResponse {
  return { statusCode, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body), isBase64Encoded: false };
}
