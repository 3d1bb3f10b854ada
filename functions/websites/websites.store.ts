import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '../core/db/dynamo.ts';
import { createFileTreeStore, type FileTreeEntry, type FileTreeFile, type FileTreeStore } from '../core/files/file-tree.store.ts';

export type WebsiteFileRecord = FileTreeFile;

export type WebsiteEntry = FileTreeEntry<WebsiteFileRecord>;

/** Files, folders and per-owner usage of sites (tables `website-files`, `website-usage`), and invalidation counts. */
export interface WebsiteStore extends FileTreeStore<WebsiteFileRecord> {
  /**
   * Adds `paths` to the owner's invalidation count of `month` (`2026-11`) and answers the new
   * total: one atomic update, so concurrent requests each see the count including their own paths
   * and none can slip under the free allowance together.
   */
  countInvalidationPaths(userId: string, month: string, paths: number): Promise<number>;
}

/** Months of invalidation counts are kept this long, then DynamoDB expires them. */
const INVALIDATION_COUNT_TTL_SEC = 400 * 24 * 3600;

export function createWebsiteStore(db: Db, nowMs: () => number): WebsiteStore {
  const tree = createFileTreeStore<WebsiteFileRecord>(db, { files: 'website-files', usage: 'website-usage' });
  return {
    ...tree,
    async countInvalidationPaths(userId, month, paths) {
      const out = await db.doc.send(
        new UpdateCommand({
          TableName: db.table('website-invalidations'),
          Key: { userId, month },
          UpdateExpression: 'ADD #paths :paths SET #expiresAt = if_not_exists(#expiresAt, :expiresAt)',
          ExpressionAttributeNames: { '#paths': 'paths', '#expiresAt': 'expiresAt' },
          ExpressionAttributeValues: { ':paths': paths, ':expiresAt': Math.floor(nowMs() / 1000) + INVALIDATION_COUNT_TTL_SEC },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return out.Attributes?.['paths'] as number;
    },
  };
}
