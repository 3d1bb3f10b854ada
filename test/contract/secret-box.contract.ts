/**
 * The SecretBox port's contract (functions/core/secret-box.ts), one suite every adapter must pass:
 * what is sealed opens to the same value with the same context and with nothing else, the sealed
 * form shows nothing of the value and survives being stored as JSON, and any change to it is
 * refused. secret-box.test.ts runs it against the local AES adapter and the KMS envelope adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SealedSecret, SecretBox } from '../../functions/core/secret-box.ts';

export interface SecretBoxContractSetup {
  start(): Promise<{ readonly box: SecretBox; close(): Promise<void> }>;
}

/** `value` (base64) with one bit of its first byte flipped: always a different value. */
function flipped(value: string): string {
  const bytes = Buffer.from(value, 'base64');
  bytes[0] = bytes[0]! ^ 0x01;
  return bytes.toString('base64');
}

export function describeSecretBoxContract(adapterName: string, setup: SecretBoxContractSetup): void {
  describe(`SecretBox contract: ${adapterName}`, () => {
    const context = { purpose: 'third-party-key', userId: 'u1', serviceName: 'openai' };
    let box: SecretBox;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ box, close } = await setup.start());
    });
    afterAll(async () => {
      await close?.();
    });

    it.each([
      ['a key', 'sk-live-0123456789abcdef'],
      ['an empty value', ''],
      ['unicode', 'Grüße ✓ 🚀 二'],
      ['64 KB', 'k'.repeat(64 * 1024)],
    ])('opens %s it sealed to the same value, also after the sealed form was stored as JSON', async (_case, plaintext) => {
      // Act
      const sealed = await box.seal(plaintext, context);
      const stored = JSON.parse(JSON.stringify(sealed)) as SealedSecret;
      const opened = await box.open(stored, context);

      // Assess
      expect(opened).toBe(plaintext);
    });

    it('shows nothing of the value in the sealed form, and seals the same value differently each time', async () => {
      // Act
      const first = await box.seal('sk-live-value-1', context);
      const second = await box.seal('sk-live-value-1', context);

      // Assess
      expect(first).toMatchObject({ v: 1, keyRef: expect.any(String), iv: expect.any(String), tag: expect.any(String), ciphertext: expect.any(String) });
      expect(JSON.stringify(first)).not.toContain('sk-live-value-1');
      expect(JSON.stringify(first)).not.toContain(Buffer.from('sk-live-value-1').toString('base64'));
      expect(first.iv).not.toBe(second.iv);
      expect(first.ciphertext).not.toBe(second.ciphertext);
    });

    it('opens only with the context it was sealed with, in any key order', async () => {
      // Prepare
      const sealed = await box.seal('value-123', context);

      // Act
      const reordered = await box.open(sealed, { serviceName: 'openai', userId: 'u1', purpose: 'third-party-key' });

      // Assess
      expect(reordered).toBe('value-123');
      await expect(box.open(sealed, { ...context, userId: 'u2' })).rejects.toThrow();
      await expect(box.open(sealed, { ...context, extra: 'x' })).rejects.toThrow();
      await expect(box.open(sealed, { userId: 'u1', serviceName: 'openai' })).rejects.toThrow();
    });

    it('refuses a sealed value whose ciphertext, tag or iv was changed', async () => {
      // Prepare
      const sealed = await box.seal('value-123', context);

      // Act + Assess
      await expect(box.open({ ...sealed, ciphertext: flipped(sealed.ciphertext) }, context)).rejects.toThrow();
      await expect(box.open({ ...sealed, tag: flipped(sealed.tag) }, context)).rejects.toThrow();
      await expect(box.open({ ...sealed, iv: flipped(sealed.iv) }, context)).rejects.toThrow();
      await expect(box.open(sealed, context)).resolves.toBe('value-123');
    });
  });
}
