/**
 * What only each SecretBox adapter does: the KMS envelope box's wrapped data keys (against moto
 * with the real AWS SDK), the local box's master key and its marker, and that neither opens the
 * other's values. What every SecretBox promises (round trip, context binding, tampering) is the
 * contract in test/contract/secret-box.contract.ts.
 */
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsSecretBox } from '../../functions/adapters/secret-box/aws.ts';
import { createLocalSecretBox } from '../../functions/adapters/secret-box/local.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the KMS envelope adapter test is skipped (python3 -m pip install "moto[server]")');

const context = { purpose: 'third-party-key', userId: 'u1', serviceName: 'openai' };

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

  it('wraps a fresh data key per secret under the KMS key, and names that key', async () => {
    // Prepare
    const box = createKmsSecretBox(kms, keyId);

    // Act
    const first = await box.seal('sk-live-value-1', context);
    const second = await box.seal('sk-live-value-1', context);

    // Assess
    expect(first.wrappedKey).toEqual(expect.any(String));
    expect(first.wrappedKey).not.toBe(second.wrappedKey);
    expect(first.keyRef).toContain(keyId);
  });

  it("refuses the local box's values, and the local box refuses its values", async () => {
    // Prepare
    const kmsBox = createKmsSecretBox(kms, keyId);
    const localBox = createLocalSecretBox(Buffer.alloc(32, 7));

    // Act
    const fromKms = await kmsBox.seal('value-123', context);
    const fromLocal = await localBox.seal('value-123', context);

    // Assess
    await expect(kmsBox.open(fromLocal, context)).rejects.toThrow(/no wrapped data key/);
    await expect(localBox.open(fromKms, context)).rejects.toThrow(/not the local master key/);
  });
});

describe('local secret box', () => {
  it('needs a 32-byte master key, marks its values local, and opens them only with the same key', async () => {
    // Prepare
    const box = createLocalSecretBox(Buffer.alloc(32, 7));
    const otherKey = createLocalSecretBox(Buffer.alloc(32, 8));

    // Act
    const sealed = await box.seal('value-123', context);

    // Assess
    expect(sealed).toMatchObject({ keyRef: 'local', wrappedKey: null });
    await expect(otherKey.open(sealed, context)).rejects.toThrow();
    expect(() => createLocalSecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});
