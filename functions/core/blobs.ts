import type * as S3Package from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { BucketName } from './area-list.ts';
import type { Config } from './config.ts';

/** Object storage for what does not fit in a table item (large log bodies, sources, messages). */
export interface BlobStore {
  put(key: string, body: string | Buffer, contentType: string): Promise<void>;
  /** Null when there is no such object. */
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
}

export type S3Sdk = typeof S3Package;

/** An S3 client and its package's commands, both made on the first call. */
export type S3Access = () => Promise<{ readonly sdk: S3Sdk; readonly client: S3Client }>;

let s3Sdk: Promise<S3Sdk> | undefined;

/**
 * A client for S3 (locally s3rver), made with the S3 package on the first call: loading that
 * package was about a tenth of the local platform's start, which, like most requests, touches no
 * bucket. (Lambda functions have the SDK outside their bundle either way.) `options`: client
 * settings beyond the wiring's (a client that presigns uploads sets `requestChecksumCalculation`).
 */
export function createS3Access(
  config: Pick<Config, 'AWS_REGION' | 'S3_ENDPOINT' | 'LOCAL_STORES_ACCESS_KEY_ID' | 'LOCAL_STORES_SECRET_ACCESS_KEY'>,
  options: Pick<S3ClientConfig, 'requestChecksumCalculation'> = {},
): S3Access {
  let made: ReturnType<S3Access> | undefined;
  return () =>
    (made ??= (s3Sdk ??= import('@aws-sdk/client-s3')).then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        ...options,
        region: config.AWS_REGION,
        // Locally s3rver: path-style addressing and the credentials of this start.
        ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true, credentials: localStoreCredentials(config) } : {}),
      }),
    })));
}

export function createBlobStore(s3: S3Access, config: Pick<Config, 'BUCKET_PREFIX'>, bucket: BucketName): BlobStore {
  const Bucket = `${config.BUCKET_PREFIX}${bucket}`;
  return {
    async put(key, body, contentType) {
      const { sdk, client } = await s3();
      await client.send(new sdk.PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      return (await readObject(s3, Bucket, key))?.body ?? null;
    },
    async delete(key) {
      const { sdk, client } = await s3();
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}

/** Whether S3 answered that there is no such object (or, for HEAD, nothing at the key). */
export function isMissingObject(error: unknown): boolean {
  return ['NoSuchKey', 'NotFound'].includes((error as Error).name);
}

/** An object's bytes and content type; null when there is no such object. */
export async function readObject(
  s3: S3Access,
  bucket: string,
  key: string,
): Promise<{ readonly body: Buffer; readonly contentType: string | undefined } | null> {
  const { sdk, client } = await s3();
  try {
    const out = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
    return { body: out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0), contentType: out.ContentType };
  } catch (error) {
    if (isMissingObject(error)) return null;
    throw error;
  }
}

/**
 * The credentials of the local stand-ins (`DYNAMODB_ENDPOINT`, `S3_ENDPOINT`), which refuse any
 * request not signed by them; placeholders, which they refuse, when the wiring set none.
 */
export function localStoreCredentials(config: Pick<Config, 'LOCAL_STORES_ACCESS_KEY_ID' | 'LOCAL_STORES_SECRET_ACCESS_KEY'>): {
  accessKeyId: string;
  secretAccessKey: string;
} {
  return { accessKeyId: config.LOCAL_STORES_ACCESS_KEY_ID ?? 'unset', secretAccessKey: config.LOCAL_STORES_SECRET_ACCESS_KEY ?? 'unset' };
}
