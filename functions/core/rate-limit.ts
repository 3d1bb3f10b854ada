import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from './clock.ts';
import { sendIf, type Db } from './db/dynamo.ts';
import { RateLimitedError } from './errors.ts';

/** Fixed-window limits, e.g. `{ limit: 60, windowSec: 60 }` for agent-reference routes (SPEC part 8). */
export interface RateLimit {
  readonly limit: number;
  readonly windowSec: number;
}

export const AGENT_REFERENCE_LIMIT: RateLimit = { limit: 60, windowSec: 60 };

export interface RateLimiter {
  /** Counts one request against `subject` (e.g. `chat:<userId>`); throws `RateLimitedError` (429) past the limit. */
  consume(subject: string, limit: RateLimit): Promise<{ remaining: number }>;
}

/** One conditional update per request: the counter only moves while it is under the limit. */
export function createRateLimiter(db: Db, clock: Clock): RateLimiter {
  const table = db.table('rate-limits');
  return {
    async consume(subject, { limit, windowSec }) {
      const now = clock.now();
      const windowMs = windowSec * 1000;
      const windowStart = Math.floor(now / windowMs) * windowMs;
      const windowEnd = windowStart + windowMs;
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { bucketKey: `${subject}#${windowSec}#${windowStart}` },
            UpdateExpression: 'ADD hits :one SET expiresAt = :exp',
            ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
            ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':exp': Math.ceil(windowEnd / 1000) + 60 },
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      if (out === null) throw new RateLimitedError(Math.max(1, Math.ceil((windowEnd - now) / 1000)));
      return { remaining: limit - Number(out.Attributes?.['hits'] ?? limit) };
    },
  };
}
