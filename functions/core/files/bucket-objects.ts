import type { Readable } from 'node:stream';
import type { BucketName } from '../area-list.ts';
import { createS3Access, isMissingObject, readObject, type S3Access } from '../blobs.ts';
import type { Config } from '../config.ts';

/** An object as it is served: its body as a stream (null for HEAD) and what HTTP caching needs. */
export interface OpenedObject {
  readonly body: Readable | null;
  readonly contentType: string | undefined;
  readonly size: number;
  /** With its quotes, as S3 sends it and HTTP wants it. */
  readonly etag: string | undefined;
}

/** A presigned POST: the form fields to send with the file, the policy signed over them. */
export interface PresignedPost {
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** One bucket of users' files (knowledge, websites): their objects and presigned URLs to them. */
export interface BucketObjects {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Null when there is no such object. */
  get(key: string): Promise<{ readonly body: Buffer; readonly contentType: string } | null>;
  /** The object as a stream, or only its headers (`head`); null when there is no such object. */
  open(key: string, options?: { head?: boolean }): Promise<OpenedObject | null>;
  /** Copies within the bucket, keeping the content type. */
  copy(from: string, to: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * A URL that lets its holder PUT one object at `key` until it expires. The content type is
   * signed, and so is the length when given: S3 refuses a PUT that differs.
   */
  presignPut(key: string, options: { contentType: string; size?: number | undefined; expiresIn: number }): Promise<string>;
  /**
   * A form upload (POST) of one object at `key`: the policy signs the content type and a
   * `content-length-range` of 0 to `maxBytes`, so S3 itself refuses a larger file.
   */
  presignPost(key: string, options: { contentType: string; maxBytes: number; expiresIn: number }): Promise<PresignedPost>;
  /** A URL that lets its holder GET the object, as an attachment named `fileName`, until it expires. */
  presignGet(key: string, options: { fileName: string; expiresIn: number }): Promise<string>;
}

export function createBucketObjects(
  config: Pick<Config, 'AWS_REGION' | 'S3_ENDPOINT' | 'BUCKET_PREFIX' | 'LOCAL_STORES_ACCESS_KEY_ID' | 'LOCAL_STORES_SECRET_ACCESS_KEY'>,
  bucket: BucketName,
): BucketObjects {
  const Bucket = `${config.BUCKET_PREFIX}${bucket}`;
  const s3 = createS3Access(config);
  // By default the SDK signs the CRC32 of the body it has into a URL, that of an empty body for an
  // upload URL, and S3 then refuses every upload through it: URLs are signed without checksums.
  const presigning: S3Access = createS3Access(config, { requestChecksumCalculation: 'WHEN_REQUIRED' });
  // Only the routes that hand out URLs load the presigners.
  const presigner = () => import('@aws-sdk/s3-request-presigner');
  return {
    async put(key, body, contentType) {
      const { sdk, client } = await s3();
      await client.send(new sdk.PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      const object = await readObject(s3, Bucket, key);
      return object === null ? null : { body: object.body, contentType: object.contentType ?? 'application/octet-stream' };
    },
    async open(key, options = {}) {
      const { sdk, client } = await s3();
      try {
        if (options.head === true) {
          const out = await client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }));
          return { body: null, contentType: out.ContentType, size: out.ContentLength ?? 0, etag: out.ETag };
        }
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key }));
        return { body: (out.Body as Readable | undefined) ?? null, contentType: out.ContentType, size: out.ContentLength ?? 0, etag: out.ETag };
      } catch (error) {
        if (isMissingObject(error)) return null;
        throw error;
      }
    },
    async copy(from, to) {
      // CopySource is `bucket/key` with the key URL-encoded (each segment; the slashes stay).
      const source = `${Bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
      const { sdk, client } = await s3();
      await client.send(new sdk.CopyObjectCommand({ Bucket, Key: to, CopySource: source }));
    },
    async delete(key) {
      const { sdk, client } = await s3();
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }));
    },
    async presignPut(key, { contentType, size, expiresIn }) {
      const [{ getSignedUrl }, { sdk, client }] = await Promise.all([presigner(), presigning()]);
      const command = new sdk.PutObjectCommand({ Bucket, Key: key, ContentType: contentType, ...(size === undefined ? {} : { ContentLength: size }) });
      const signableHeaders = new Set(['content-type', ...(size === undefined ? [] : ['content-length'])]);
      return getSignedUrl(client, command, { expiresIn, signableHeaders });
    },
    async presignPost(key, { contentType, maxBytes, expiresIn }) {
      const [{ createPresignedPost }, { client }] = await Promise.all([import('@aws-sdk/s3-presigned-post'), presigning()]);
      const { url, fields } = await createPresignedPost(client, {
        Bucket,
        Key: key,
        Fields: { 'Content-Type': contentType },
        Conditions: [
          ['content-length-range', 0, maxBytes],
          ['eq', '$Content-Type', contentType],
        ],
        Expires: expiresIn,
      });
      return { url, fields };
    },
    async presignGet(key, { fileName, expiresIn }) {
      const [{ getSignedUrl }, { sdk, client }] = await Promise.all([presigner(), presigning()]);
      // RFC 6266/5987: an ASCII fallback and the exact UTF-8 name.
      const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
      const disposition = `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
      return getSignedUrl(client, new sdk.GetObjectCommand({ Bucket, Key: key, ResponseContentDisposition: disposition }), { expiresIn });
    },
  };
}
