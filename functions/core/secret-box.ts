import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';

/**
 * A secret encrypted at rest. `context` (e.g. owner and service name) is bound to the ciphertext
 * as AES-GCM additional data (and as the KMS encryption context), so a sealed value copied to
 * another owner's record does not open.
 */
export interface SealedSecret {
  readonly v: 1;
  /** `local` (master key file) or the KMS key id that wrapped the data key. */
  readonly keyRef: string;
  /** KMS-wrapped data key (base64); absent for the local adapter. */
  readonly wrappedKey: string | null;
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

export type SecretContext = Readonly<Record<string, string>>;

/** Encrypts and decrypts third-party secrets (DESIGN 11): KMS envelope in the cloud, a local master key otherwise. */
export interface SecretBox {
  seal(plaintext: string, context: SecretContext): Promise<SealedSecret>;
  open(sealed: SealedSecret, context: SecretContext): Promise<string>;
}

/** Canonical bytes of a context: keys sorted, so the same context always gives the same AAD. */
function aad(context: SecretContext): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => a.localeCompare(b))), 'utf8');
}

function gcmSeal(key: Buffer, plaintext: string, context: SecretContext): { iv: string; tag: string; ciphertext: string } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
}

function gcmOpen(key: Buffer, sealed: SealedSecret, context: SecretContext): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(aad(context));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
}

/** AES-256-GCM under one 32-byte master key (locally kept in DATA_DIR with mode 600). */
export function createLocalSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('The master key must be 32 bytes');
  return {
    async seal(plaintext, context) {
      return { v: 1, keyRef: 'local', wrappedKey: null, ...gcmSeal(masterKey, plaintext, context) };
    },
    async open(sealed, context) {
      if (sealed.keyRef !== 'local') throw new Error(`Secret was sealed with ${sealed.keyRef}, not the local master key`);
      return gcmOpen(masterKey, sealed, context);
    },
  };
}

/**
 * KMS envelope encryption: a fresh data key per secret from GenerateDataKey, used once for
 * AES-256-GCM and stored only in its KMS-wrapped form. Plain data keys never leave memory.
 */
/**
 * The KMS commands, imported on first use: this module is part of every local start, which never
 * uses KMS, and the SDK client package is among the heavier ones to load.
 */
const kmsCommands = () => import('@aws-sdk/client-kms');

export function createKmsSecretBox(kms: KMSClient, keyId: string): SecretBox {
  return {
    async seal(plaintext, context) {
      const { GenerateDataKeyCommand } = await kmsCommands();
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
      const { DecryptCommand } = await kmsCommands();
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
