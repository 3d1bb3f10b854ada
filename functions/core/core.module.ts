import { defineArea } from '../../lib/manifest/define.ts';

/**
 * The kernel every function shares: credits, rate limits, usage records and their counters, and the blob bucket.
 * It serves no route; its tables and bucket are reached through the kernel's ports.
 */
export const coreArea = defineArea({
  name: 'core',
  tables: [
    // Credit grants and debits, newest last by entry id (time-ordered).
    { name: 'credit-ledger', partitionKey: 'userId', sortKey: 'entryId' },
    // Fixed-window counters; items expire after their window.
    { name: 'rate-limits', partitionKey: 'bucketKey', ttlAttribute: 'expiresAt' },
    // One record per resource invocation.
    {
      name: 'usage-logs',
      partitionKey: 'requestId',
      ttlAttribute: 'expiresAt',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byUser', partitionKey: 'userId', sortKey: 'createdAt' },
        { name: 'byRoot', partitionKey: 'rootRequestId', sortKey: 'createdAt' },
      ],
    },
    // Analytics counters (usage-counters.ts): `u#<userId>` or `r#<resourceId>`, then an hour, day or
    // resource-day slot. Added to by the usage recorder as each record is written; read by the
    // analytics area.
    { name: 'usage-stats', partitionKey: 'scope', sortKey: 'slot', ttlAttribute: 'expiresAt' },
  ],
  // Object storage of the platform; large bodies and user files go here, never into table items.
  buckets: [{ name: 'blobs', purpose: 'large log bodies, sources and messages past the item-size threshold' }],
});
