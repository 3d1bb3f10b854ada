/**
 * The SecretBox contract (secret-box.contract.ts) against both adapters: the local AES-256-GCM box
 * under a master key, and the KMS envelope box against the moto AWS API server with the real SDK
 * (skipped when moto is not installed).
 */
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { createKmsSecretBox } from '../../functions/adapters/secret-box/aws.ts';
import { createLocalSecretBox } from '../../functions/adapters/secret-box/local.ts';
import { motoAvailable, motoClientConfig, startMoto } from '../support/moto.ts';
import { describeSecretBoxContract } from './secret-box.contract.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the KMS secret box contract is skipped (python3 -m pip install "moto[server]")');

describeSecretBoxContract('local (AES-256-GCM, master key)', {
  start: async () => ({ box: createLocalSecretBox(randomBytes(32)), close: async () => {} }),
});

describe.skipIf(!hasMoto)('with moto', () => {
  describeSecretBoxContract('KMS envelope (moto)', {
    async start() {
      const moto = await startMoto();
      const kms = new KMSClient(motoClientConfig(moto.endpoint));
      const keyId = (await kms.send(new CreateKeyCommand({ Description: 'platform keys' }))).KeyMetadata!.KeyId!;
      return { box: createKmsSecretBox(kms, keyId), close: () => moto.stop() };
    },
  });
});
