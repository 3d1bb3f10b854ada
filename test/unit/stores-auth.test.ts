/**
 * The local stores' checks (lib/local/stores-auth.ts) on what the SDK itself signs: presigned URLs
 * and POST policies, at chosen times (the integration test covers them over HTTP).
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { storeVerifier } from '../../lib/local/stores-auth.ts';

const credentials = { accessKeyId: 'LOCALTEST', secretAccessKey: 'per-start-secret' };
const endpoint = 'http://127.0.0.1:4569';
const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials, requestChecksumCalculation: 'WHEN_REQUIRED' });
const verifier = storeVerifier('s3', credentials);

async function presignedPut(key: string) {
  const url = new URL(
    await getSignedUrl(client, new PutObjectCommand({ Bucket: 'b', Key: key, ContentType: 'text/plain' }), {
      expiresIn: 60,
      signableHeaders: new Set(['content-type']),
    }),
  );
  return { url: url.pathname + url.search, headers: { host: url.host, 'content-type': 'text/plain' } };
}

describe('presigned URLs', () => {
  it('accepts the URL as signed, and refuses it expired, moved or with another content type', async () => {
    // Prepare
    const { url, headers } = await presignedPut('incoming/u1/a b+é.txt');
    const later = new Date(Date.now() + 61_000);

    // Act
    const asSigned = await verifier.verifyRequest({ method: 'PUT', url, headers });
    const expired = await verifier.verifyRequest({ method: 'PUT', url, headers }, later);
    const moved = await verifier.verifyRequest({ method: 'PUT', url: url.replace('/u1/', '/u2/'), headers });
    const retyped = await verifier.verifyRequest({ method: 'PUT', url, headers: { ...headers, 'content-type': 'text/html' } });
    const asGet = await verifier.verifyRequest({ method: 'GET', url, headers });

    // Assess
    expect(asSigned).toBeNull();
    expect(expired?.code).toBe('ExpiredRequest');
    expect([moved?.code, retyped?.code, asGet?.code]).toEqual(['SignatureDoesNotMatch', 'SignatureDoesNotMatch', 'SignatureDoesNotMatch']);
  });

  it('refuses a URL signed by other credentials', async () => {
    // Prepare
    const { url, headers } = await presignedPut('k.txt');

    // Act
    const other = await storeVerifier('s3', { ...credentials, secretAccessKey: 'another' }).verifyRequest({ method: 'PUT', url, headers });

    // Assess
    expect(other?.code).toBe('SignatureDoesNotMatch');
  });
});

describe('POST policies', () => {
  async function policyFields() {
    const { fields } = await createPresignedPost(client, {
      Bucket: 'b',
      Key: 'incoming/u1/index.html',
      Fields: { 'Content-Type': 'text/html' },
      Conditions: [
        ['content-length-range', 0, 100],
        ['eq', '$Content-Type', 'text/html'],
      ],
      Expires: 60,
    });
    return new Map(Object.entries(fields).map(([name, value]) => [name.toLowerCase(), value]));
  }

  it('grants the signed key, type and size range, and refuses the policy expired or in another bucket', async () => {
    // Prepare
    const fields = await policyFields();

    // Act
    const granted = await verifier.verifyPost('b', fields);
    const expired = await verifier.verifyPost('b', fields, new Date(Date.now() + 61_000));
    const otherBucket = await verifier.verifyPost('c', fields);

    // Assess
    expect(granted).toEqual({ key: 'incoming/u1/index.html', contentType: 'text/html', minBytes: 0, maxBytes: 100 });
    expect('code' in expired && expired.code).toBe('ExpiredRequest');
    expect('code' in otherBucket && otherBucket.code).toBe('PolicyViolation');
  });
});
