import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../functions/core/blobs.ts';
import type { Db } from '../../functions/core/db/dynamo.ts';
import { createUsageLogWriter, INLINE_BODY_BYTES } from '../../functions/core/usage-log.ts';

import { DEFAULT_USAGE_LOG_RETENTION_DAYS, PlatformStack, USAGE_LOG_BLOB_PREFIX, type PlatformStackProps } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { configuredFunctionsOf, json, platformFunctions, synthPlatform, withScratchOutdir, type TemplateJson, scratchEntriesDir } from './synth-platform.ts';

/** The lifecycle rules of the blobs bucket. */
function blobRules(template: TemplateJson): Record<string, unknown>[] {
  const [bucket] = Object.values(template.Resources).filter(
    (r) => r.Type === 'AWS::S3::Bucket' && (JSON.stringify(r.Properties?.['BucketName']) ?? '').includes('-blobs"'),
  );
  return bucket!.Properties?.['LifecycleConfiguration'].Rules;
}

const scratchEntries = scratchEntriesDir('retention-entries-');
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

const ROUTES: readonly RouteSpec[] = [
  {
    id: 'demo.get',
    method: 'GET',
    path: '/demo',
    host: 'base',
    area: 'demo',
    handler: 'get',
    auth: 'public',
    callers: 'role',
    mode: 'buffered',
    style: 'B',
    timeoutSec: 29,
    maxBodyBytes: 1024,
  },
];

function synthWith(props: Partial<PlatformStackProps>): TemplateJson {
  return withScratchOutdir((outdir) => {
    const app = new App({ outdir, analyticsReporting: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new PlatformStack(app, 'retention-test', { stage: 'test', version: '0', routes: ROUTES, entriesDir: scratchEntries, ...props });
    return Template.fromStack(stack).toJSON() as TemplateJson;
  });
}

/** The platform's own functions: not the runtimes (tenant-isolated), which run user code and read no configuration. */
const functionRetention = (template: TemplateJson) =>
  configuredFunctionsOf(template).map((r) => r.Properties?.['Environment'].Variables.USAGE_LOG_RETENTION_DAYS);

describe('usage-log retention', () => {
  it('expires stored bodies a day after their records by default (30 days), the retention every function reads', () => {
    // Prepare
    const platform = synthPlatform();

    // Act
    const rules = blobRules(json(platform.main));

    // Assess
    expect(DEFAULT_USAGE_LOG_RETENTION_DAYS).toBe(30);
    expect(rules).toContainEqual({
      Id: 'expire-usage-logs',
      Prefix: USAGE_LOG_BLOB_PREFIX,
      ExpirationInDays: 31,
      // In the versioned bucket the expired body becomes a noncurrent version: gone a day later.
      NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      Status: 'Enabled',
    });
    expect(platformFunctions(platform).map(([, f]) => f.Properties?.['Environment'].Variables.USAGE_LOG_RETENTION_DAYS)).toEqual(
      platformFunctions(platform).map(() => '30'),
    );
  });

  it('takes the retention from one prop, for the bodies and the functions alike', () => {
    // Prepare
    const props = { usageLogRetentionDays: 90 };

    // Act
    const template = synthWith(props);

    // Assess
    expect(blobRules(template)).toContainEqual(expect.objectContaining({ Prefix: USAGE_LOG_BLOB_PREFIX, ExpirationInDays: 91 }));
    expect(functionRetention(template).length).toBeGreaterThan(0);
    expect(new Set(functionRetention(template))).toEqual(new Set(['90']));
  });

  it('refuses a retention the functions would refuse at start', () => {
    // Act / Assess: functions/core/config.ts accepts whole days from 1 to 3650.
    for (const days of [0, 3651, 1.5]) expect(() => synthWith({ usageLogRetentionDays: days })).toThrow(/Invalid usage-log retention/);
  });

  it('matches where the usage-log writer stores large bodies, and outlives the records', async () => {
    // Prepare: the writer with stand-in ports, a body over the inline limit.
    const keys: string[] = [];
    const items: Record<string, unknown>[] = [];
    const db = {
      table: (name: string) => `t-${name}`,
      doc: { send: async (command: { input: { Item: Record<string, unknown> } }) => void items.push(command.input.Item) },
    } as unknown as Db;
    const blobs: BlobStore = { put: async (key) => void keys.push(key), get: async () => null, delete: async () => undefined };
    const now = Date.UTC(2026, 0, 1);
    const writer = createUsageLogWriter(db, blobs, { now: () => now }, DEFAULT_USAGE_LOG_RETENTION_DAYS);

    // Act
    await writer.write({
      lineage: { requestId: 'req-1', rootRequestId: 'req-1', parentRequestId: null, parentConversationId: null, parentAgentId: null },
      userId: 'user-1',
      resourceId: 'agent-1',
      resourceType: 'agent',
      status: 'success',
      request: 'x'.repeat(INLINE_BODY_BYTES + 1),
      response: { ok: true },
      durationMs: 5,
      creditsUsed: 0,
    });

    // Assess
    expect(keys).toHaveLength(1);
    expect(keys[0]!.startsWith(USAGE_LOG_BLOB_PREFIX)).toBe(true);
    const expiresAt = items[0]!['expiresAt'] as number;
    // S3 expires objects at the first midnight UTC after the object's age reaches the days.
    expect(now / 1000 + (DEFAULT_USAGE_LOG_RETENTION_DAYS + 1) * 86_400).toBeGreaterThan(expiresAt);
  });
});
