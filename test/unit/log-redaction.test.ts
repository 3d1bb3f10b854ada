/** The logger's redaction (issue 38): secret-named fields are masked, but never values too plain to be secrets. */
import { describe, expect, it } from 'vitest';
import { redact } from '../../functions/core/logger.ts';

describe('redact', () => {
  it('keeps numbers, booleans and empty strings under secret-sounding names: a token count is not a credential', () => {
    // Act
    const out = redact({ usage: { totalTokens: 535, inputTokens: 0, hasToken: true, tokenHint: '' } });
    // Assess
    expect(out).toEqual({ usage: { totalTokens: 535, inputTokens: 0, hasToken: true, tokenHint: '' } });
  });

  it('still masks strings and objects under secret names, whatever their inner names', () => {
    // Act
    const out = redact({ apiKey: 'abc', authorization: 'Bearer x', credentials: { user: 'u', pass: 'p' }, password: '1234' });
    // Assess
    expect(out).toEqual({ apiKey: '[REDACTED]', authorization: '[REDACTED]', credentials: '[REDACTED]', password: '[REDACTED]' });
  });
});
