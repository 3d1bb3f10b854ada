import { createBlobStore, createS3Access, type BlobStore } from '../../core/blobs.ts';
import type { Config } from '../../core/config.ts';

/** The `blobs` bucket in the cloud: S3, under BUCKET_PREFIX. */
export function s3Blobs(config: Config): BlobStore {
  return createBlobStore(createS3Access(config), config, 'blobs');
}
