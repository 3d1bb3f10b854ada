import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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

/** AES-256-GCM sealing shared by the adapters (functions/adapters/secret-box/): they differ only in where the key comes from. */
export function gcmSeal(key: Buffer, plaintext: string, context: SecretContext): { iv: string; tag: string; ciphertext: string } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
}

export function gcmOpen(key: Buffer, sealed: SealedSecret, context: SecretContext): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(aad(context));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
}
