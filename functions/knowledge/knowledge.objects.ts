import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
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

export function createKnowledgeObjects(client: S3Client, config: Pick<Config, 'BUCKET_PREFIX'>): KnowledgeObjects {
  const Bucket = `${config.BUCKET_PREFIX}knowledge`;
  // Only the routes that hand out URLs load the presigner.
  const presigner = () => import('@aws-sdk/s3-request-presigner');
  return {
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        const body = out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
        return { body, contentType: out.ContentType ?? 'application/octet-stream' };
      } catch (error) {
        if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') return null;
        throw error;
      }
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
      return getSignedUrl(client, command, { expiresIn, signableHeaders });
    },
    async presignGet(key, { fileName, expiresIn }) {
      const { getSignedUrl } = await presigner();
      // RFC 6266/5987: an ASCII fallback and the exact UTF-8 name.
      const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
      const disposition = `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
      return getSignedUrl(client, new GetObjectCommand({ Bucket, Key: key, ResponseContentDisposition: disposition }), { expiresIn });
    },
  };
}
