import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client, readObject } from '../core/blobs.ts';
import type { Config } from '../core/config.ts';

/** The knowledge bucket: users' files under `users/`, presigned uploads landing under `incoming/`. */
export interface KnowledgeObjects {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Null when there is no such object. */
  get(key: string): Promise<{ readonly body: Buffer; readonly contentType: string } | null>;
  /** Copies within the bucket, keeping the content type. */
  copy(from: string, to: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * A URL that lets its holder PUT one object at `key` until it expires. The content type is
   * signed, and so is the length when given: S3 refuses a PUT that differs.
   */
  presignPut(key: string, options: { contentType: string; size?: number | undefined; expiresIn: number }): Promise<string>;
  /** A URL that lets its holder GET the object, as an attachment named `fileName`, until it expires. */
  presignGet(key: string, options: { fileName: string; expiresIn: number }): Promise<string>;
}

export function createKnowledgeObjects(config: Pick<Config, 'AWS_REGION' | 'S3_ENDPOINT' | 'BUCKET_PREFIX'>): KnowledgeObjects {
  const Bucket = `${config.BUCKET_PREFIX}knowledge`;
  const client = createS3Client(config);
  // By default the SDK signs the CRC32 of the body it has into a URL, that of an empty body for an
  // upload URL, and S3 then refuses every upload through it: URLs are signed without checksums.
  let signer: S3Client | undefined;
  const presigning = () => (signer ??= createS3Client(config, { requestChecksumCalculation: 'WHEN_REQUIRED' }));
  // Only the routes that hand out URLs load the presigner.
  const presigner = () => import('@aws-sdk/s3-request-presigner');
  return {
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      const object = await readObject(client, Bucket, key);
      return object === null ? null : { body: object.body, contentType: object.contentType ?? 'application/octet-stream' };
    },
    async copy(from, to) {
      // CopySource is `bucket/key` with the key URL-encoded (each segment; the slashes stay).
      const source = `${Bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
      await client.send(new CopyObjectCommand({ Bucket, Key: to, CopySource: source }));
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async presignPut(key, { contentType, size, expiresIn }) {
      const { getSignedUrl } = await presigner();
      const command = new PutObjectCommand({ Bucket, Key: key, ContentType: contentType, ...(size === undefined ? {} : { ContentLength: size }) });
      const signableHeaders = new Set(['content-type', ...(size === undefined ? [] : ['content-length'])]);
      return getSignedUrl(presigning(), command, { expiresIn, signableHeaders });
    },
    async presignGet(key, { fileName, expiresIn }) {
      const { getSignedUrl } = await presigner();
      // RFC 6266/5987: an ASCII fallback and the exact UTF-8 name.
      const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
      const disposition = `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
      return getSignedUrl(presigning(), new GetObjectCommand({ Bucket, Key: key, ResponseContentDisposition: disposition }), { expiresIn });
    },
  };
}
