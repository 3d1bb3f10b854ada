import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { ConfigError, type Config } from '../../core/config.ts';
import { gcmOpen, gcmSeal, type SecretBox } from '../../core/secret-box.ts';

/** The `secretBox` port in the cloud: envelope encryption under the KMS key KEYS_KMS_KEY_ID. */
export function kmsSecretBox(config: Config): SecretBox {
  if (!config.KEYS_KMS_KEY_ID) throw new ConfigError('Invalid platform configuration: KEYS_KMS_KEY_ID: is required in the cloud');
  return createKmsSecretBox(new KMSClient({ region: config.AWS_REGION }), config.KEYS_KMS_KEY_ID);
}

/**
 * KMS envelope encryption: a fresh data key per secret from GenerateDataKey, used once for
 * AES-256-GCM and stored only in its KMS-wrapped form. Plain data keys never leave memory.
 */
export function createKmsSecretBox(kms: KMSClient, keyId: string): SecretBox {
  return {
    async seal(plaintext, context) {
      const dataKey = await kms.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }));
      if (!dataKey.Plaintext || !dataKey.CiphertextBlob) throw new Error('KMS returned no data key');
      const key = Buffer.from(dataKey.Plaintext);
      try {
        return {
          v: 1,
          keyRef: dataKey.KeyId ?? keyId,
          wrappedKey: Buffer.from(dataKey.CiphertextBlob).toString('base64'),
          ...gcmSeal(key, plaintext, context),
        };
      } finally {
        key.fill(0);
      }
    },
    async open(sealed, context) {
      if (sealed.wrappedKey === null) throw new Error('Secret has no wrapped data key');
      const out = await kms.send(new DecryptCommand({ CiphertextBlob: Buffer.from(sealed.wrappedKey, 'base64'), EncryptionContext: { ...context } }));
      if (!out.Plaintext) throw new Error('KMS returned no plaintext');
      const key = Buffer.from(out.Plaintext);
      try {
        return gcmOpen(key, sealed, context);
      } finally {
        key.fill(0);
      }
    },
  };
}
