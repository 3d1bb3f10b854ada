import type * as z from 'zod';
import { planLimits, tierOf } from '../core/plans.ts';
import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { CREDIT_PRICE_USD, roundCredits, type Credits } from '../core/credits.ts';
import type { StoredObject } from '../core/entry/storage-event.ts';
import { AliasRequiredError, NotFoundError, PayloadTooLargeError, ValidationError } from '../core/errors.ts';
import type { BucketObjects } from '../core/files/bucket-objects.ts';
import { assertRoomFor, incomingUpload, putFolders, removeFile, removeSubtree, settleFile, writeWithinQuota } from '../core/files/file-tree.ts';
import { checkKeyLength, checkSegments, normaliseFileName, type FilePath } from '../core/files/paths.ts';
import {
  decodeContent,
  DOWNLOAD_URL_EXPIRES_SEC,
  MAX_DIRECT_UPLOAD_BYTES,
  MB,
  storageQuotaExceeded,
  toMb,
  UPLOAD_URL_EXPIRES_SEC,
} from '../core/files/uploads.ts';
import { siteUrlOf, type PublicUrls } from '../core/http/public-urls.ts';
import type { Lineage } from '../core/http/lineage.ts';
import type { Logger } from '../core/logger.ts';
import { contentTypeOf } from './content-types.ts';
import type { SiteCache } from './site-cache.ts';
import { INCOMING_PREFIX, incomingObjectKey, INDEX_FILE, relativeKey, siteFolderFromClient, siteObjectKey, sitePathFromClient } from './websites-paths.ts';
import type { createFolderBody, invalidateBody, listQuery, uploadBody, uploadUrlBody } from './websites.schema.ts';
import type { WebsiteFileRecord, WebsiteStore } from './websites.store.ts';

export interface WebsitePorts {
  readonly websiteStore: WebsiteStore;
  readonly websiteObjects: BucketObjects;
  readonly siteCache: SiteCache;
  readonly credits: Credits;
  readonly clock: Clock;
  readonly log: Logger;
  readonly config: Pick<Config, 'WEBSITE_FREE_QUOTA_MB'>;
}

/** SPEC part 8: a presigned upload carries at most 25 MB (26214400 bytes). */
export const MAX_PRESIGNED_UPLOAD_BYTES = 25 * MB;

/** SPEC part 2: the tiers of website storage. */
export type WebsiteTier = 'free' | 'starter' | 'professional';

/** Storage each tier may use, in MiB (SPEC part 8); `free` is a setting so operators and tests can change it. */
export function tierQuotaMb(tier: WebsiteTier, config: Pick<Config, 'WEBSITE_FREE_QUOTA_MB'>): number {
  return planLimits(tier, config).websiteQuotaMb; // plans (H, issue 35): the quotas are the plans' (core/plans.ts)
}

/** The account's plan (core/plans.ts), from the account auth read in this request; `free` without one. */
export function websiteTier(actor: Pick<UserActor, 'userId' | 'account'>): WebsiteTier {
  return tierOf(actor); // plans (H, issue 35)
}

/** SPEC part 8: the first 1,000 invalidation paths of a calendar month (UTC) are free. */
export const FREE_INVALIDATION_PATHS_PER_MONTH = 1000;

/** What CloudFront charges per invalidation path beyond its own monthly 1,000. */
export const INVALIDATION_PATH_USD = 0.005;

/** Credits per path beyond the free allowance: CloudFront's price in the platform's credits (0.5). */
export const CREDITS_PER_INVALIDATION_PATH = INVALIDATION_PATH_USD / CREDIT_PRICE_USD;

/**
 * The paths of a request that are beyond the month's free allowance, given the month's count
 * including them: each request pays for exactly its own paths past the allowance.
 */
export function billablePaths(totalAfter: number, paths: number): number {
  return Math.min(paths, Math.max(0, totalAfter - FREE_INVALIDATION_PATHS_PER_MONTH));
}

function quotaOf(actor: Pick<UserActor, 'userId' | 'account'>, ports: Pick<WebsitePorts, 'config'>) {
  const tier = websiteTier(actor);
  const quotaMb = tierQuotaMb(tier, ports.config);
  return { tier, quotaMb, quotaBytes: quotaMb * MB };
}

function usageOf(bytes: number, quota: { tier: WebsiteTier; quotaMb: number; quotaBytes: number }) {
  return {
    storageUsedMb: toMb(bytes),
    storageQuotaMb: quota.quotaMb,
    percentUsed: quota.quotaBytes === 0 ? 100 : Math.round((bytes / quota.quotaBytes) * 10_000) / 100,
    tier: quota.tier,
  };
}

/**
 * The public URL of the caller's site, or null without an alias or a site host: its own origin
 * (`http://{alias}.localhost:3001/`) where the platform gives each site one, else `{site_url}/{alias}/`.
 */
function callerSiteUrl(actor: UserActor, urls: PublicUrls): string | null {
  return actor.alias === null ? null : siteUrlOf(urls, actor.alias);
}

function fileUrl(siteUrl: string | null, key: string): string | null {
  return siteUrl === null ? null : siteUrl + key.split('/').map(encodeURIComponent).join('/');
}

function newPath(input: { fileName: string; folder?: string | undefined }): FilePath {
  const path = { folder: siteFolderFromClient('folder', input.folder), fileName: normaliseFileName('fileName', input.fileName) };
  // The encoded-dot check of a file name, as for folders (a file named `%2e%2e` would be a URL's `..`).
  sitePathFromClient('fileName', relativeKey(path));
  return path;
}

/** Writes the entry of a stored file and its folders', giving back the bytes of the file it replaced. */
function settleStoredFile(userId: string, path: FilePath, file: { size: number; contentType: string }, ports: WebsitePorts): Promise<number> {
  const record: WebsiteFileRecord = {
    userId,
    kind: 'file',
    folder: path.folder,
    fileName: path.fileName,
    size: file.size,
    contentType: file.contentType,
    lastModified: ports.clock.now(),
  };
  return settleFile(ports.websiteStore, record);
}

/** POST /website/upload: at most 5 MB (decoded), within the tier's quota. */
export async function uploadFile(actor: UserActor, input: z.infer<typeof uploadBody>, ports: WebsitePorts, urls: PublicUrls) {
  const { userId } = actor;
  const path = newPath(input);
  const key = relativeKey(path);
  const objectKey = siteObjectKey(userId, key);
  checkKeyLength('fileName', objectKey);
  const bytes = decodeContent(input.content, input.encoding === 'base64', 'encoding is base64');
  if (bytes.length > MAX_DIRECT_UPLOAD_BYTES)
    throw new PayloadTooLargeError(
      MAX_DIRECT_UPLOAD_BYTES,
      `The file is ${bytes.length} bytes; direct uploads are limited to 5 MB (${MAX_DIRECT_UPLOAD_BYTES} bytes). Use POST /website/upload-url for larger files.`,
    );
  const contentType = input.contentType ?? contentTypeOf(path.fileName, 'text/html');
  const quota = quotaOf(actor, ports);
  if (!(await writeWithinQuota(ports.websiteStore, userId, bytes.length, quota.quotaBytes, () => ports.websiteObjects.put(objectKey, bytes, contentType))))
    throw storageQuotaExceeded(await ports.websiteStore.usedBytes(userId), bytes.length, quota.quotaMb);
  await settleStoredFile(userId, path, { size: bytes.length, contentType }, ports);
  return { message: 'File uploaded', key, size: bytes.length, contentType, url: fileUrl(callerSiteUrl(actor, urls), key) };
}

/**
 * POST /website/upload-url: a presigned PUT (SPEC 4.11), its content type signed and its length too
 * when the client gave `size`; or, with `method: "POST"`, a presigned form POST whose policy limits
 * the file to 25 MB, so storage refuses a larger one. The object lands under `incoming/`, where its
 * storage event checks its real size and the quota before it becomes part of the site
 * (`publishUploadedObject`), whichever way it came.
 */
export async function createUploadUrl(actor: UserActor, input: z.infer<typeof uploadUrlBody>, ports: WebsitePorts, urls: PublicUrls) {
  const { userId } = actor;
  const path = newPath(input);
  const key = relativeKey(path);
  checkKeyLength('fileName', incomingObjectKey(userId, key));
  if (input.size !== undefined && input.size > MAX_PRESIGNED_UPLOAD_BYTES)
    throw new PayloadTooLargeError(
      MAX_PRESIGNED_UPLOAD_BYTES,
      `The file is ${input.size} bytes; uploads through a URL are limited to 25 MB (${MAX_PRESIGNED_UPLOAD_BYTES} bytes).`,
    );
  const quota = quotaOf(actor, ports);
  await assertRoomFor(ports.websiteStore, userId, input.size, quota);
  const contentType = input.contentType ?? contentTypeOf(path.fileName, 'text/html');
  const common = { key, contentType, expiresIn: UPLOAD_URL_EXPIRES_SEC, maxSize: MAX_PRESIGNED_UPLOAD_BYTES, siteUrl: callerSiteUrl(actor, urls) };
  if (input.method === 'POST') {
    const post = await ports.websiteObjects.presignPost(incomingObjectKey(userId, key), {
      contentType,
      maxBytes: MAX_PRESIGNED_UPLOAD_BYTES,
      expiresIn: UPLOAD_URL_EXPIRES_SEC,
    });
    return { uploadUrl: post.url, method: 'POST' as const, fields: post.fields, ...common };
  }
  // A PUT cannot carry a size policy: a larger file is refused by the storage event (publishUploadedObject).
  const uploadUrl = await ports.websiteObjects.presignPut(incomingObjectKey(userId, key), { contentType, size: input.size, expiresIn: UPLOAD_URL_EXPIRES_SEC });
  return {
    uploadUrl,
    method: 'PUT' as const,
    headers: { 'content-type': contentType, ...(input.size === undefined ? {} : { 'content-length': String(input.size) }) },
    ...common,
  };
}

/**
 * The storage event of an object posted through an upload URL: moves it from `incoming/` into the
 * owner's site, or deletes it when it is over 25 MB (storage that does not enforce the signed
 * policy, like the local one) or over the owner's quota. Exactly the object's bytes are reserved.
 */
export async function publishUploadedObject(object: StoredObject, ports: WebsitePorts): Promise<void> {
  const parsed = await incomingUpload(INCOMING_PREFIX, object.key, ports.websiteObjects, ports.log);
  if (parsed === null) return;
  const { userId, path } = parsed;
  const key = relativeKey(path);
  const incoming = await ports.websiteObjects.open(object.key, { head: true });
  // A later event for the same key already moved it.
  if (incoming === null) return;
  const reject = async (reason: string) => {
    await ports.websiteObjects.delete(object.key);
    ports.log.warn('websites: presigned upload rejected', { userId, key, size: incoming.size, reason });
  };
  if (incoming.size > MAX_PRESIGNED_UPLOAD_BYTES) return reject(`over the ${MAX_PRESIGNED_UPLOAD_BYTES}-byte limit of upload URLs`);
  const quota = quotaOf({ userId }, ports);
  const copy = () => ports.websiteObjects.copy(object.key, siteObjectKey(userId, key));
  if (!(await writeWithinQuota(ports.websiteStore, userId, incoming.size, quota.quotaBytes, copy))) return reject('storage quota exceeded');
  await ports.websiteObjects.delete(object.key);
  await settleStoredFile(userId, path, { size: incoming.size, contentType: incoming.contentType ?? contentTypeOf(path.fileName) }, ports);
}

/** POST /website/download-url */
export async function createDownloadUrl(actor: UserActor, input: { key: string }, ports: WebsitePorts) {
  const path = sitePathFromClient('key', input.key);
  const key = relativeKey(path);
  if ((await ports.websiteStore.getFile(actor.userId, path)) === null) throw new NotFoundError(`No file ${key}.`);
  const downloadUrl = await ports.websiteObjects.presignGet(siteObjectKey(actor.userId, key), { fileName: path.fileName, expiresIn: DOWNLOAD_URL_EXPIRES_SEC });
  return { downloadUrl, key, expiresIn: DOWNLOAD_URL_EXPIRES_SEC };
}

/** GET /website/list: one folder's files and folders, a page at a time, with the owner's usage. */
export async function listFiles(actor: UserActor, input: z.infer<typeof listQuery>, ports: WebsitePorts) {
  const { userId } = actor;
  const folder = siteFolderFromClient('prefix', input.prefix);
  const [page, usedBytes] = await Promise.all([
    ports.websiteStore.listChildren(userId, folder, input.limit, input.cursor),
    ports.websiteStore.usedBytes(userId),
  ]);
  const files = [];
  const folders = [];
  for (const entry of page.items) {
    if (entry.kind === 'folder') folders.push({ key: entry.folder, fileName: entry.folder.slice(folder.length, -1), type: 'folder' as const });
    else
      files.push({
        key: relativeKey(entry),
        fileName: entry.fileName,
        size: entry.size,
        contentType: entry.contentType,
        lastModified: new Date(entry.lastModified).toISOString(),
        type: 'file' as const,
      });
  }
  const { storageUsedMb, storageQuotaMb, tier } = usageOf(usedBytes, quotaOf(actor, ports));
  return { files, folders, prefix: folder, nextCursor: page.nextCursor, storageUsedMb, storageQuotaMb, tier };
}

/** POST /website/delete */
export async function deleteFile(actor: UserActor, input: { key: string }, ports: WebsitePorts) {
  const path = sitePathFromClient('key', input.key);
  const key = relativeKey(path);
  if (!(await removeSiteFile(actor.userId, path, ports))) throw new NotFoundError(`No file ${key}.`);
  return { key, deleted: true };
}

/** Removes a file's entry, object and bytes; false when there was no such file (or a concurrent delete took it). */
async function removeSiteFile(userId: string, path: FilePath, ports: WebsitePorts): Promise<boolean> {
  return (await removeFile(ports.websiteStore, userId, path, () => ports.websiteObjects.delete(siteObjectKey(userId, relativeKey(path))))) !== null;
}

/** POST /website/create-folder: the folder (inside `parent` when given) and any missing folder above it. */
export async function createFolder(actor: UserActor, input: z.infer<typeof createFolderBody>, ports: WebsitePorts) {
  const folder = siteFolderFromClient('parent', input.parent) + siteFolderFromClient('folder', input.folder);
  checkKeyLength('folder', siteObjectKey(actor.userId, folder));
  await putFolders(ports.websiteStore, actor.userId, folder, ports.clock.now());
  return { key: folder };
}

/** POST /website/delete-folder: everything inside, at any depth, then the folder; irreversible. */
export async function deleteFolder(actor: UserActor, input: { folder: string }, ports: WebsitePorts) {
  const { userId } = actor;
  const folder = siteFolderFromClient('folder', input.folder);
  if (folder === '') throw new ValidationError('Invalid parameters', ['folder: must name a folder inside your site, not its root']);
  const { found, deletedCount } = await removeSubtree(ports.websiteStore, userId, folder, (file) => removeSiteFile(userId, file, ports));
  if (!found) throw new NotFoundError(`No folder ${folder}.`);
  await ports.websiteStore.deleteFolder(userId, folder);
  return { folder, deletedCount };
}

/** GET /website/usage */
export async function getUsage(actor: UserActor, ports: WebsitePorts) {
  return usageOf(await ports.websiteStore.usedBytes(actor.userId), quotaOf(actor, ports));
}

/** GET /website/info: `published` when the account has an alias and the site an `index.html` (SPEC part 3). */
export async function getInfo(actor: UserActor, ports: WebsitePorts, urls: PublicUrls) {
  const [usage, index] = await Promise.all([
    ports.websiteStore.usage(actor.userId),
    ports.websiteStore.getFile(actor.userId, { folder: '', fileName: INDEX_FILE }),
  ]);
  const hasIndexHtml = index !== null;
  return {
    siteUrl: callerSiteUrl(actor, urls),
    alias: actor.alias,
    hasIndexHtml,
    fileCount: usage.files,
    storageUsedMb: toMb(usage.bytes),
    status: actor.alias !== null && hasIndexHtml ? ('published' as const) : ('not_published' as const),
  };
}

/**
 * A client's invalidation path as a site-host path under the caller's `/{alias}/` (in the cloud
 * the edge gives a site's own origin these same cache keys, lib/cloud/site-viewer-request.ts): `/*`,
 * `/about/*`, `about/index.html`. A trailing `*` is CloudFront's wildcard; a path ending with `/`
 * becomes its `index.html`, the cache key the viewer-request function gives directory requests.
 */
export function scopedInvalidationPath(alias: string, input: string): string {
  const field = 'paths';
  let rest = input.normalize('NFC').replace(/^\/+/, '');
  const wildcard = rest.endsWith('*');
  if (wildcard) rest = rest.slice(0, -1);
  if (rest.includes('*')) throw new ValidationError('Invalid parameters', [`${field}: "*" may only end a path`]);
  if (rest !== '') {
    // The same refusals as for files: nothing can climb out of the caller's site.
    sitePathFromClient(field, rest.endsWith('/') ? `${rest}x` : rest);
    checkSegments(field, rest.replace(/\/$/, '').split('/'));
  }
  if (!wildcard && (rest === '' || rest.endsWith('/'))) rest += INDEX_FILE;
  const encoded = rest.split('/').map(encodeURIComponent).join('/');
  return `/${encodeURIComponent(alias)}/${encoded}${wildcard ? '*' : ''}`;
}

/** The month an invalidation is counted in: the calendar month, UTC. */
function monthOf(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7);
}

/**
 * POST /website/invalidate: clears the caller's paths from the site cache. The month's count is
 * taken first (one atomic update); the paths beyond the free allowance cost
 * `CREDITS_PER_INVALIDATION_PATH` each, debited before CloudFront is asked. When the invalidation
 * fails, the count and the credits are given back.
 */
export async function invalidateCache(actor: UserActor, input: z.infer<typeof invalidateBody>, ports: WebsitePorts, lineage: Lineage) {
  if (actor.alias === null) throw new AliasRequiredError();
  const paths = [...new Set(input.paths.map((path) => scopedInvalidationPath(actor.alias!, path)))];
  const month = monthOf(ports.clock.now());
  const total = await ports.websiteStore.countInvalidationPaths(actor.userId, month, paths.length);
  const cost = roundCredits(billablePaths(total, paths.length) * CREDITS_PER_INVALIDATION_PATH);
  const change = { reason: `website invalidation of ${paths.length} path(s)`, requestId: lineage.requestId };
  try {
    if (cost > 0) await ports.credits.debit(actor.userId, cost, change);
  } catch (error) {
    await ports.websiteStore.countInvalidationPaths(actor.userId, month, -paths.length);
    throw error;
  }
  try {
    const invalidation = await ports.siteCache.invalidate(paths, `${actor.userId}-${lineage.requestId}`);
    return { invalidationId: invalidation.invalidationId, status: invalidation.status, paths, creditsCharged: cost };
  } catch (error) {
    await ports.websiteStore.countInvalidationPaths(actor.userId, month, -paths.length);
    if (cost > 0) await ports.credits.grant(actor.userId, cost, { ...change, reason: `refund: ${change.reason} failed` });
    throw error;
  }
}
