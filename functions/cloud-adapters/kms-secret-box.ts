import { KMSClient } from '@aws-sdk/client-kms';
import { ConfigError, type Config } from '../core/config.ts';
import { createKmsSecretBox, type SecretBox } from '../core/secret-box.ts';

/** The `secretBox` port in the cloud: envelope encryption under the KMS key KEYS_KMS_KEY_ID. */
export function kmsSecretBox(config: Config): SecretBox {
  if (!config.KEYS_KMS_KEY_ID) throw new ConfigError('Invalid platform configuration: KEYS_KMS_KEY_ID: is required in the cloud');
  return createKmsSecretBox(new KMSClient({ region: config.AWS_REGION }), config.KEYS_KMS_KEY_ID);
}
