import { randomUUID } from 'node:crypto';

/** What a cache invalidation answers: SPEC part 3, initially `InProgress` where a cache exists. */
export interface SiteCacheInvalidation {
  readonly invalidationId: string;
  readonly status: string;
}

/** The cache in front of the site host, which owners clear after changing their files. */
export interface SiteCache {
  /**
   * Drops `paths` (site-host paths such as `/alice/*`, URL-encoded) from the cache. The caller
   * reference makes a retried request the same invalidation rather than a second one.
   */
  invalidate(paths: readonly string[], callerReference: string): Promise<SiteCacheInvalidation>;
}

/**
 * The local site host caches nothing (serve-site.ts answers every request from the bucket), so
 * there is nothing to clear: the invalidation is `Completed` at once, with a `local-` id.
 */
export function createLocalSiteCache(): SiteCache {
  return {
    invalidate() {
      return Promise.resolve({ invalidationId: `local-${randomUUID()}`, status: 'Completed' });
    },
  };
}

/**
 * CloudFront's CreateInvalidation on the site distribution. The SDK is imported on the first call,
 * so no other route's bundle or start pays for it.
 */
export function createCloudFrontSiteCache(options: {
  distributionId: string;
  region: string;
  /** Another endpoint and fixed credentials: tests point the adapter at moto. */
  endpoint?: string | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}): SiteCache {
  let client: Promise<{ send: (paths: readonly string[], ref: string) => Promise<SiteCacheInvalidation> }> | undefined;
  const load = async () => {
    const { CloudFrontClient, CreateInvalidationCommand } = await import('@aws-sdk/client-cloudfront');
    const cloudFront = new CloudFrontClient({
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    });
    return {
      async send(paths: readonly string[], ref: string) {
        const out = await cloudFront.send(
          new CreateInvalidationCommand({
            DistributionId: options.distributionId,
            InvalidationBatch: { CallerReference: ref, Paths: { Quantity: paths.length, Items: [...paths] } },
          }),
        );
        const invalidation = out.Invalidation;
        if (invalidation?.Id === undefined) throw new Error('CloudFront answered CreateInvalidation without an invalidation id');
        return { invalidationId: invalidation.Id, status: invalidation.Status ?? 'InProgress' };
      },
    };
  };
  return {
    async invalidate(paths, callerReference) {
      // A failed load (it cannot, short of a broken install) is tried again by the next call.
      client ??= load().catch((error: unknown) => {
        client = undefined;
        throw error;
      });
      return (await client).send(paths, callerReference);
    },
  };
}
