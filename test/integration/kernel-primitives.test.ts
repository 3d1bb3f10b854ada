import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsufficientCreditsError, RateLimitedError } from '../../functions/core/errors.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { AGENT_REFERENCE_LIMIT } from '../../functions/core/rate-limit.ts';
import { INLINE_BODY_BYTES } from '../../functions/core/usage-log.ts';
import type { Ports } from '../../functions/ports.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('kernel primitives on the real local stores', () => {
  let platform: TestPlatform;
  let ports: Ports;

  beforeAll(async () => {
    platform = await startTestPlatform();
    ports = platform.running.ports;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('lets 50 concurrent debits of 1 against a balance of 20 leave exactly 0, with 30 refusals and 20 ledger entries', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'debtor', credits: 20 });
    // Act
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => ports.credits.debit(user.userId, 1, { reason: 'test run', requestId: `req-${i}` })),
    );
    // Assess
    const refused = results.filter((r) => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    expect(refused).toHaveLength(30);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(InsufficientCreditsError);
    const balance = await ports.db.doc.send(new GetCommand({ TableName: ports.db.table('users'), Key: { userId: user.userId }, ConsistentRead: true }));
    expect(balance.Item?.['credits']).toBe(0);
    const ledger = await ports.db.doc.send(
      new QueryCommand({ TableName: ports.db.table('credit-ledger'), KeyConditionExpression: 'userId = :u', ExpressionAttributeValues: { ':u': user.userId } }),
    );
    const debits = (ledger.Items ?? []).filter((e) => e['amount'] < 0);
    expect(debits).toHaveLength(20);
    expect(debits.map((e) => e['balanceAfter']).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('reports the cost and the balance when credits are short', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'shortie', credits: 2 });
    // Act
    const attempt = ports.credits.debit(user.userId, 2.5, { reason: 'too much', requestId: null });
    // Assess
    await expect(attempt).rejects.toThrow('this call costs 2.5 and the balance is 2');
  });

  it('rate-limits in fixed windows: 60 pass, the 61st gets 429 with Retry-After, the next window resets', async () => {
    // Prepare
    const subject = `chat:${crypto.randomUUID()}`;
    platform.clock.alignToWindow(AGENT_REFERENCE_LIMIT.windowSec * 1000);
    // Act
    for (let i = 0; i < AGENT_REFERENCE_LIMIT.limit; i++) await ports.rateLimiter.consume(subject, AGENT_REFERENCE_LIMIT);
    const over = await ports.rateLimiter.consume(subject, AGENT_REFERENCE_LIMIT).catch((e: unknown) => e);
    platform.clock.advance(AGENT_REFERENCE_LIMIT.windowSec * 1000);
    const nextWindow = await ports.rateLimiter.consume(subject, AGENT_REFERENCE_LIMIT);
    // Assess
    expect(over).toBeInstanceOf(RateLimitedError);
    expect((over as RateLimitedError).retryAfterSec).toBeGreaterThanOrEqual(1);
    expect((over as RateLimitedError).retryAfterSec).toBeLessThanOrEqual(60);
    expect(nextWindow.remaining).toBe(59);
  });

  it('writes usage records: small bodies inline, large ones in the blob store, secrets redacted, with a TTL', async () => {
    // Prepare
    const lineage = lineageOf('req-usage-1', 'root=root-usage;parent=parent-usage;conversation=conv-1;agent=agent-1');
    const big = { text: 'x'.repeat(INLINE_BODY_BYTES * 2) };
    // Act
    const record = await ports.usageLogs.write({
      lineage,
      userId: 'user-1',
      resourceId: 'act-1',
      resourceType: 'test',
      status: 'success',
      request: { prompt: 'hi', apiKey: 'sk-live-123', note: 'token svc_ut_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ' },
      response: big,
      durationMs: 12,
      memoryMb: 128,
      creditsUsed: 1,
    });
    const stored = await ports.db.doc.send(
      new GetCommand({ TableName: ports.db.table('usage-logs'), Key: { requestId: 'req-usage-1' }, ConsistentRead: true }),
    );
    const fullBody = await ports.blobs.get(record.response.blobKey ?? 'missing');
    // Assess
    expect(stored.Item).toMatchObject({
      rootRequestId: 'root-usage',
      parentRequestId: 'parent-usage',
      parentConversationId: 'conv-1',
      parentAgentId: 'agent-1',
      status: 'success',
    });
    expect(record.request.truncated).toBe(false);
    expect(record.request.preview).not.toContain('sk-live-123');
    expect(record.request.preview).not.toContain('abcdefghijklmnopqrstuvwxyz');
    expect(record.response.truncated).toBe(true);
    expect(record.response.preview.length).toBe(INLINE_BODY_BYTES);
    expect(JSON.parse(fullBody!.toString('utf8'))).toEqual(big);
    expect(record.expiresAt - Math.floor(record.createdAt / 1000)).toBe(30 * 86_400);
    expect(await ports.blobs.get('usage-logs/none/missing.json')).toBeNull();
  });
});
