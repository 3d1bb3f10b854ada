import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsSecretBox, createLocalSecretBox } from '../../functions/core/secret-box.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the KMS envelope adapter test is skipped (python3 -m pip install "moto[server]")');

describe.skipIf(!hasMoto)('KMS envelope secret box against moto with the real AWS SDK', () => {
  let moto: MotoServer;
  let kms: KMSClient;
  let keyId: string;

  beforeAll(async () => {
    moto = await startMoto();
    kms = new KMSClient(motoClientConfig(moto.endpoint));
    keyId = (await kms.send(new CreateKeyCommand({ Description: 'platform keys' }))).KeyMetadata!.KeyId!;
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it('seals with a fresh wrapped data key per secret and opens with the same context only', async () => {
    // Prepare
    const box = createKmsSecretBox(kms, keyId);
    const context = { purpose: 'third-party-key', userId: 'u1', serviceName: 'openai' };
    // Act
    const first = await box.seal('sk-live-value-1', context);
    const second = await box.seal('sk-live-value-1', context);
    const opened = await box.open(first, context);
    const wrongContext = box.open(first, { ...context, userId: 'u2' });
    // Assess
    expect(opened).toBe('sk-live-value-1');
    expect(first.wrappedKey).not.toBeNull();
    expect(first.wrappedKey).not.toBe(second.wrappedKey);
    expect(first.ciphertext).not.toBe(second.ciphertext);
    expect(JSON.stringify(first)).not.toContain('sk-live-value-1');
    await expect(wrongContext).rejects.toThrow();
  });
});

describe('local secret box', () => {
  it('binds the ciphertext to its context and refuses a tampered one', async () => {
    // Prepare
    const box = createLocalSecretBox(Buffer.alloc(32, 7));
    const context = { userId: 'u1', serviceName: 'openai' };
    const sealed = await box.seal('value-123', context);
    // Act + Assess
    await expect(box.open(sealed, context)).resolves.toBe('value-123');
    await expect(box.open(sealed, { userId: 'u2', serviceName: 'openai' })).rejects.toThrow();
    const tampered = { ...sealed, ciphertext: Buffer.from('x' + Buffer.from(sealed.ciphertext, 'base64').toString('latin1').slice(1), 'latin1').toString('base64') };
    await expect(box.open(tampered, context)).rejects.toThrow();
    expect(() => createLocalSecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});
