import { gcmOpen, gcmSeal, type SecretBox } from '../../core/secret-box.ts';

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
