import { createSign, generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCognitoVerifier } from '../../functions/core/auth/cognito.ts';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const USER_POOL_ID = 'us-east-1_TestPool1';
const CLIENT_ID = 'client-abc123';
const ISSUER = `https://cognito-idp.us-east-1.amazonaws.com/${USER_POOL_ID}`;

/** A signing key and JWKS standing in for the user pool's, so ID tokens verify offline. */
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KID = 'test-key-1';
const jwks = { keys: [{ ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: KID, alg: 'RS256', use: 'sig' }] };

function idToken(claims: Record<string, unknown>, key = privateKey): string {
  const now = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: KID, typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ iss: ISSUER, aud: CLIENT_ID, token_use: 'id', iat: now, auth_time: now, exp: now + 3600, ...claims })).toString(
    'base64url',
  );
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(key).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

describe('sign-in with Cognito ID tokens', () => {
  let platform: TestPlatform;
  const verifier = createCognitoVerifier({ userPoolId: USER_POOL_ID, clientId: CLIENT_ID, jwks });

  beforeAll(async () => {
    platform = await startTestPlatform({ identity: verifier });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('verifies signature, audience, token use and expiry', async () => {
    const sub = randomUUID();
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expect(await verifier.verify(idToken({ sub, email: 'a@example.com' }))).toEqual({ subject: sub, email: 'a@example.com' });
    expect(await verifier.verify(idToken({ sub, aud: 'another-client' }))).toBeNull();
    expect(await verifier.verify(idToken({ sub, token_use: 'access' }))).toBeNull();
    expect(await verifier.verify(idToken({ sub, exp: Math.floor(Date.now() / 1000) - 60 }))).toBeNull();
    expect(await verifier.verify(idToken({ sub }, other))).toBeNull();
    expect(await verifier.verify('not-a-jwt')).toBeNull();
  });

  it('creates the account on first sign-in, keyed by the subject, and reuses it after', async () => {
    // Prepare
    const sub = randomUUID();
    const token = idToken({ sub, email: 'first@example.com' });
    // Act
    const first = await platform.api('GET', '/user/info', { token });
    const alias = await platform.api('POST', '/user/alias', { token, body: { alias: 'cognito-user' } });
    const again = await platform.api('GET', '/user/info', { token: idToken({ sub, email: 'first@example.com' }) });
    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ userId: sub, email: 'first@example.com', alias: null, isAdmin: false });
    expect(alias.status).toBe(200);
    expect(again.body.data).toMatchObject({ userId: sub, alias: 'cognito-user' });
  });

  it('refuses forged, foreign and deleted-account tokens with the same 401', async () => {
    // Prepare
    const sub = randomUUID();
    const token = idToken({ sub });
    await platform.api('GET', '/user/info', { token });
    await platform.api('DELETE', '/user/account', { token, body: { confirm: true } });
    // Act
    const deleted = await platform.api('GET', '/user/info', { token });
    const forged = await platform.api('GET', '/user/info', {
      token: idToken({ sub: randomUUID() }, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
    });
    // Assess
    for (const res of [deleted, forged]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('AUTHENTICATION_REQUIRED');
    }
  });
});
