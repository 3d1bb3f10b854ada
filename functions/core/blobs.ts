import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { BucketName } from '../../lib/manifest/buckets.ts';
import type { Config } from './config.ts';

/** Object storage for what does not fit in a table item (large log bodies, sources, messages). */
export interface BlobStore {
  put(key: string, body: string | Buffer, contentType: string): Promise<void>;
  /** Null when there is no such object. */
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
}

/** `options`: client settings beyond the wiring's (a client that presigns uploads sets `requestChecksumCalculation`). */
export function createS3Client(config: Pick<Config, 'AWS_REGION' | 'S3_ENDPOINT'>, options: Pick<S3ClientConfig, 'requestChecksumCalculation'> = {}): S3Client {
  return new S3Client({
    ...options,
    region: config.AWS_REGION,
    // Locally s3rver: path-style addressing and its fixed credentials.
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {}),
  });
}

export function createBlobStore(client: S3Client, config: Pick<Config, 'BUCKET_PREFIX'>, bucket: BucketName): BlobStore {
  const Bucket = `${config.BUCKET_PREFIX}${bucket}`;
  return {
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      return (await readObject(client, Bucket, key))?.body ?? null;
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}

/** An object's bytes and content type; null when there is no such object. */
export async function readObject(
  client: S3Client,
  bucket: string,
  key: string,
): Promise<{ readonly body: Buffer; readonly contentType: string | undefined } | null> {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return { body: out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0), contentType: out.ContentType };
  } catch (error) {
    if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') return null;
    throw error;
  }
}
