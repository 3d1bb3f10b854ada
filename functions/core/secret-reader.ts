import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * Values the operator keeps in a secret store rather than in the functions' configuration (OAuth
 * client secrets in the cloud). The value is never logged or returned; callers that hold it
 * during a request register it with `registerSecret` so log lines mask it.
 */
export interface SecretReader {
  /** The secret's value; `secretId` is its ARN. Rejects when it cannot be read. */
  read(secretId: string): Promise<string>;
}

/**
 * Reads each secret once per execution environment: concurrent first reads share one call, and a
 * failed read is forgotten so the next request tries again. A changed value reaches warm
 * environments only when they are replaced (a new deploy or a configuration update).
 */
export function cachedSecretReader(fetchSecret: (secretId: string) => Promise<string>): SecretReader {
  const values = new Map<string, Promise<string>>();
  return {
    read(secretId) {
      let value = values.get(secretId);
      if (value === undefined) {
        value = fetchSecret(secretId);
        values.set(secretId, value);
        value.catch(() => {
          if (values.get(secretId) === value) values.delete(secretId);
        });
      }
      return value;
    },
  };
}

/** Secrets Manager (cloud): the secret's SecretString, cached as `cachedSecretReader` says. */
export function createSecretsManagerReader(client: SecretsManagerClient): SecretReader {
  return cachedSecretReader(async (secretId) => {
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    // A binary secret, or one whose current version is empty, is a setup mistake worth naming.
    if (out.SecretString === undefined || out.SecretString === '') throw new Error(`The secret ${secretId} has no SecretString value`);
    return out.SecretString;
  });
}
