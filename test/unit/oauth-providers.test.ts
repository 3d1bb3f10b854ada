import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../functions/core/config.ts';
import { UpstreamError, ValidationError } from '../../functions/core/errors.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { cachedSecretReader, type SecretReader } from '../../functions/core/secret-reader.ts';
import { withSecretScope } from '../../functions/core/secret-scope.ts';
import { providerSettings, readClientSecret } from '../../functions/oauth/oauth.providers.ts';
import { areas } from '../../lib/manifest/areas.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:oauth/provider-a-AbCdEf';
const SECRET_VALUE = 'very-secret-client-value';

function config(env: Record<string, string>): Config {
  return parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-', ...env }, areas);
}

const COMPLETE_A = {
  OAUTH_PROVIDER_A_AUTHORIZE_URL: 'https://auth.example.com/authorize',
  OAUTH_PROVIDER_A_TOKEN_URL: 'https://auth.example.com/token',
  OAUTH_PROVIDER_A_CLIENT_ID: 'client-a',
};

/** A reader over a map, counting reads; `failures` makes the next reads of an id fail. */
function fakeReader(values: Record<string, string>, failures: Record<string, number> = {}) {
  const calls: string[] = [];
  const reader = cachedSecretReader(async (id) => {
    calls.push(id);
    if ((failures[id] ?? 0) > 0) {
      failures[id]! -= 1;
      throw new Error('AccessDeniedException: not authorized');
    }
    const value = values[id];
    if (value === undefined) throw new Error('ResourceNotFoundException');
    return value;
  });
  return { reader, calls };
}

/** The error `run` throws, to assert on its class and message. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('OAuth provider settings', () => {
  it('names the missing settings and, with no secret either, the two ways to give one', () => {
    // Act
    const error = thrown(() => providerSettings(config({ OAUTH_PROVIDER_B_AUTHORIZE_URL: 'https://x.example.com/a' }), 'provider_b', null));

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'OAUTH_PROVIDER_NOT_CONFIGURED' });
    expect((error as Error).message).toBe(
      'OAuth provider provider_b is not configured on this platform; the operator must set OAUTH_PROVIDER_B_TOKEN_URL, OAUTH_PROVIDER_B_CLIENT_ID.' +
        ' A confidential client also needs OAUTH_PROVIDER_B_CLIENT_SECRET or OAUTH_PROVIDER_B_CLIENT_SECRET_ARN.',
    );
  });

  it('counts a secret ARN as the secret: no hint when either is set', () => {
    // Act
    const withArn = thrown(() => providerSettings(config({ OAUTH_PROVIDER_C_CLIENT_SECRET_ARN: SECRET_ARN }), 'provider_c', fakeReader({}).reader));
    const withValue = thrown(() => providerSettings(config({ OAUTH_PROVIDER_C_CLIENT_SECRET: SECRET_VALUE }), 'provider_c', null));

    // Assess
    for (const error of [withArn, withValue]) {
      expect((error as Error).message).toMatch(/must set OAUTH_PROVIDER_C_AUTHORIZE_URL, OAUTH_PROVIDER_C_TOKEN_URL, OAUTH_PROVIDER_C_CLIENT_ID\.$/);
      expect((error as Error).message).not.toContain(SECRET_VALUE);
      expect((error as Error).message).not.toContain(SECRET_ARN);
    }
  });

  it('keeps the secret unread in the settings: the value, the ARN, or none for a public client', () => {
    // Prepare
    const { reader, calls } = fakeReader({ [SECRET_ARN]: SECRET_VALUE });

    // Act
    const byValue = providerSettings(config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET: SECRET_VALUE }), 'provider_a', null);
    const byArn = providerSettings(
      config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: SECRET_ARN, OAUTH_PROVIDER_A_SCOPES: 'a, b a' }),
      'provider_a',
      reader,
    );
    const publicClient = providerSettings(config(COMPLETE_A), 'provider_a', reader);

    // Assess
    expect(byValue.clientSecret).toEqual({ from: 'value', value: SECRET_VALUE });
    expect(byArn).toEqual({
      provider: 'provider_a',
      authorizeUrl: COMPLETE_A.OAUTH_PROVIDER_A_AUTHORIZE_URL,
      tokenUrl: COMPLETE_A.OAUTH_PROVIDER_A_TOKEN_URL,
      clientId: 'client-a',
      clientSecret: { from: 'secret-store', secretId: SECRET_ARN },
      scopes: ['a', 'b'],
    });
    expect(publicClient.clientSecret).toBeNull();
    expect(calls).toEqual([]);
  });

  it('refuses a secret ARN without a secret store (the local platform), saying it is for the cloud', () => {
    // Act
    const error = thrown(() => providerSettings(config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: SECRET_ARN }), 'provider_a', null));

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'OAUTH_PROVIDER_NOT_CONFIGURED' });
    expect((error as Error).message).toBe(
      'OAuth provider provider_a cannot be used on this platform as configured. OAUTH_PROVIDER_A_CLIENT_SECRET_ARN (a Secrets Manager secret) is only supported in the cloud; on the local platform set OAUTH_PROVIDER_A_CLIENT_SECRET instead.',
    );
  });

  it('refuses both the secret and its ARN', () => {
    // Act
    const error = thrown(() =>
      providerSettings(
        config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET: SECRET_VALUE, OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: SECRET_ARN }),
        'provider_a',
        fakeReader({}).reader,
      ),
    );

    // Assess
    expect((error as Error).message).toBe(
      'OAuth provider provider_a cannot be used on this platform as configured. The operator must set only one of OAUTH_PROVIDER_A_CLIENT_SECRET and OAUTH_PROVIDER_A_CLIENT_SECRET_ARN.',
    );
    expect((error as Error).message).not.toContain(SECRET_VALUE);
  });
});

describe('OAuth client secret', () => {
  it('reads a secret-store secret when asked, once per environment, and masks it in the request logs', async () => {
    // Prepare
    const { reader, calls } = fakeReader({ [SECRET_ARN]: SECRET_VALUE });
    const lines: string[] = [];
    const log = createLogger('debug', {}, (line) => lines.push(line));
    const settings = providerSettings(config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: SECRET_ARN }), 'provider_a', reader);

    // Act
    const [first, second] = await withSecretScope(async () => {
      const value = await readClientSecret(settings, { secrets: reader, log });
      log.info('something echoed it', { detail: `prefix ${value} suffix` });
      return [value, await readClientSecret(settings, { secrets: reader, log })];
    });

    // Assess
    expect([first, second]).toEqual([SECRET_VALUE, SECRET_VALUE]);
    expect(calls).toEqual([SECRET_ARN]);
    expect(lines.join('\n')).not.toContain(SECRET_VALUE);
    expect(lines.join('\n')).toContain('[REDACTED]');
  });

  it('answers a failed read with a 502 naming the setting, logs no value, and reads again next time', async () => {
    // Prepare
    const { reader, calls } = fakeReader({ [SECRET_ARN]: SECRET_VALUE }, { [SECRET_ARN]: 1 });
    const lines: string[] = [];
    const log = createLogger('debug', {}, (line) => lines.push(line));
    const settings = providerSettings(config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: SECRET_ARN }), 'provider_a', reader);

    // Act
    const failed = await readClientSecret(settings, { secrets: reader, log }).catch((error: unknown) => error);
    const retried = await readClientSecret(settings, { secrets: reader, log });

    // Assess
    expect(failed).toBeInstanceOf(UpstreamError);
    expect(failed).toMatchObject({ code: 'OAUTH_CLIENT_SECRET_UNAVAILABLE', message: expect.stringContaining('OAUTH_PROVIDER_A_CLIENT_SECRET_ARN') });
    expect(retried).toBe(SECRET_VALUE);
    expect(calls).toEqual([SECRET_ARN, SECRET_ARN]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'error',
      provider: 'provider_a',
      setting: 'OAUTH_PROVIDER_A_CLIENT_SECRET_ARN',
      error: 'Error: AccessDeniedException: not authorized',
    });
  });

  it('returns the configured value, and null for a public client, without a secret store', async () => {
    // Prepare
    const log = createLogger('silent');
    const byValue = providerSettings(config({ ...COMPLETE_A, OAUTH_PROVIDER_A_CLIENT_SECRET: SECRET_VALUE }), 'provider_a', null);
    const publicClient = providerSettings(config(COMPLETE_A), 'provider_a', null);

    // Act / Assess
    await expect(readClientSecret(byValue, { secrets: null, log })).resolves.toBe(SECRET_VALUE);
    await expect(readClientSecret(publicClient, { secrets: null, log })).resolves.toBeNull();
  });
});

describe('cached secret reader', () => {
  it('shares one read between concurrent callers and keeps secrets apart by id', async () => {
    // Prepare
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    const reader: SecretReader = cachedSecretReader(async (id) => {
      calls.push(id);
      await gate;
      return `value-of-${id}`;
    });

    // Act
    const pending = [reader.read('one'), reader.read('one'), reader.read('two')];
    release();
    const values = await Promise.all(pending);

    // Assess
    expect(values).toEqual(['value-of-one', 'value-of-one', 'value-of-two']);
    expect(calls).toEqual(['one', 'two']);
  });
});
