import * as z from 'zod';
import type { KernelPorts } from '../ports.ts';
import { defineArea, providePort, KIB } from '../../lib/manifest/define.ts';
import { createBucketObjects, type BucketObjects } from '../core/files/bucket-objects.ts';
import { createCloudFrontSiteCache, createLocalSiteCache, type SiteCache } from './site-cache.ts';
import { createWebsiteStore, type WebsiteStore } from './websites.store.ts';

/** A 5 MB file as base64 JSON (4/3 larger) and a few names. */
const UPLOAD_BODY_BYTES = 7 * 1024 * KIB;

/**
 * Per-user static sites (SPEC 4.11): files by API, served publicly each on an origin of its own,
 * `{alias}.{site host}`, where the site host's path form `/{alias}/{path}` redirects.
 */
export const websitesArea = defineArea({
  name: 'websites',
  routes: [
    { method: 'GET', path: '/website/list', handler: 'list-site-files', auth: 'required', callers: 'role', style: 'website' },
    { method: 'POST', path: '/website/upload', handler: 'upload-site-file', auth: 'required', style: 'website', maxBodyBytes: UPLOAD_BODY_BYTES },
    { method: 'POST', path: '/website/upload-url', handler: 'create-site-upload-url', auth: 'required', style: 'website' },
    { method: 'POST', path: '/website/download-url', handler: 'get-site-download-url', auth: 'required', callers: 'role', style: 'website' },
    { method: 'POST', path: '/website/delete', handler: 'delete-site-file', auth: 'required', style: 'website' },
    { method: 'POST', path: '/website/delete-folder', handler: 'delete-site-folder', auth: 'required', style: 'website' },
    { method: 'POST', path: '/website/create-folder', handler: 'create-site-folder', auth: 'required', style: 'website' },
    { method: 'GET', path: '/website/usage', handler: 'get-site-usage', auth: 'required', callers: 'role', style: 'website' },
    { method: 'GET', path: '/website/info', handler: 'get-site-info', auth: 'required', callers: 'role', style: 'website' },
    { method: 'POST', path: '/website/invalidate', handler: 'invalidate-site-cache', auth: 'required', style: 'website' },
    // The site host: every path, answered by serve-site.ts (HEAD too: the route table serves HEAD
    // with GET routes). Streaming, so files are piped from the bucket rather than buffered, and in
    // the cloud it is the function URL behind the site distribution (lib/cloud/site-distribution.ts).
    { method: 'GET', path: '/{site+}', host: 'site', mode: 'streaming', handler: 'serve-site', auth: 'public', callers: 'role', style: 'website' },
  ],
  entryPoints: [
    // Presigned uploads land under `incoming/`; this moves each into its site, within the limits.
    { kind: 'storageEvent', handler: 'publish-upload', bucket: 'websites', prefix: 'incoming/', timeoutSec: 120 },
  ],
  tables: [
    // Files and folders by owner (core/files/file-tree.store.ts), so listings never scan the bucket.
    { name: 'website-files', partitionKey: 'userId', sortKey: 'entry' },
    // One counter per owner: bytes (reserved before each write) and files.
    { name: 'website-usage', partitionKey: 'userId' },
    // Invalidation paths per owner and calendar month, for the free allowance.
    { name: 'website-invalidations', partitionKey: 'userId', sortKey: 'month', ttlAttribute: 'expiresAt' },
  ],
  buckets: [{ name: 'websites', purpose: "users' sites (sites/{userId}/), and presigned uploads on their way in (incoming/)", browserUploads: true }],
  provides: {
    websiteStore: providePort<WebsiteStore>(
      { tables: ['website-files', 'website-usage', 'website-invalidations'] },
      ({ db, clock }: KernelPorts): WebsiteStore => createWebsiteStore(db, () => clock.now()),
    ),
    websiteObjects: providePort<BucketObjects>({ buckets: ['websites'] }, (kernel: KernelPorts): BucketObjects =>
      createBucketObjects(kernel.config, 'websites'),
    ),
    siteCache: providePort<SiteCache>({ siteCache: true }, ({ config }: KernelPorts): SiteCache =>
      config.SITE_DISTRIBUTION_ID === undefined
        ? createLocalSiteCache()
        : createCloudFrontSiteCache({ distributionId: config.SITE_DISTRIBUTION_ID, region: config.AWS_REGION, endpoint: config.CLOUDFRONT_ENDPOINT }),
    ),
  },
  uses: ['users', 'credits'],
  settings: {
    // SPEC part 8: 50.
    WEBSITE_FREE_QUOTA_MB: z.coerce
      .number()
      .min(0)
      .max(1_000_000)
      .default(50)
      .describe('Site storage of the `free` tier, in MiB; `starter` 1 GB and `professional` 10 GB are fixed'),
    SITE_DISTRIBUTION_ID: z.string().min(1).optional().meta({
      description: "The site host's CloudFront distribution, whose cache a publish invalidates (cloud; nothing caches sites locally)",
      setBy: 'stack',
    }),
    CLOUDFRONT_ENDPOINT: z.url().optional().describe('Another CloudFront endpoint, e.g. a stand-in (the tests point it at moto)'),
  },
});
