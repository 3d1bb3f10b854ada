import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretsManagerReader } from '../../functions/core/secret-reader.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the Secrets Manager tests of OAuth client secrets are skipped (python3 -m pip install "moto[server]")');
const skipped = hasMoto ? '' : ' (SKIPPED: moto is not installed)';

/** An ARN of the right shape for a secret that does not exist. */
const MISSING_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:oauth/never-created-AbCdEf';

describe.skipIf(!hasMoto)(`Secrets Manager secret reader against moto with the real AWS SDK${skipped}`, () => {
  let moto: MotoServer;
  let client: SecretsManagerClient;

  beforeAll(async () => {
    moto = await startMoto();
    client = new SecretsManagerClient(motoClientConfig(moto.endpoint));
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it('reads the SecretString by ARN once per reader: a changed value reaches new readers only', async () => {
    // Prepare
    const created = await client.send(new CreateSecretCommand({ Name: 'oauth/cache-test', SecretString: 'first-value-123' }));
    const reader = createSecretsManagerReader(client);

    // Act
    const first = await reader.read(created.ARN!);
    await client.send(new PutSecretValueCommand({ SecretId: created.ARN!, SecretString: 'second-value-456' }));
    const cached = await reader.read(created.ARN!);
    const fresh = await createSecretsManagerReader(client).read(created.ARN!);

    // Assess
    expect(created.ARN).toMatch(/^arn:aws:secretsmanager:us-east-1:\d{12}:secret:oauth\/cache-test-[A-Za-z0-9]{6}$/);
    expect([first, cached, fresh]).toEqual(['first-value-123', 'first-value-123', 'second-value-456']);
  });

  it('does not keep a failed read: once the secret exists, the next read succeeds', async () => {
    // Prepare
    const reader = createSecretsManagerReader(client);

    // Act
    const missing = await reader.read('oauth/created-late').catch((error: unknown) => error);
    await client.send(new CreateSecretCommand({ Name: 'oauth/created-late', SecretString: 'late-value-789' }));
    const later = await reader.read('oauth/created-late');

    // Assess
    expect(missing).toMatchObject({ name: 'ResourceNotFoundException' });
    expect(later).toBe('late-value-789');
  });

  it('refuses a secret without a SecretString (a binary secret)', async () => {
    // Prepare
    const created = await client.send(new CreateSecretCommand({ Name: 'oauth/binary', SecretBinary: Buffer.from('binary-value') }));

    // Act
    const read = createSecretsManagerReader(client).read(created.ARN!);

    // Assess
    await expect(read).rejects.toThrow(/has no SecretString value/);
  });
});

describe.skipIf(!hasMoto)(`OAuth with the client secret in Secrets Manager (moto)${skipped}`, () => {
  const logLines: string[] = [];
  const provider = new FakeProvider();
  let moto: MotoServer;
  let platform: TestPlatform;
  let secretArn = '';

  beforeAll(async () => {
    moto = await startMoto();
    const client = new SecretsManagerClient(motoClientConfig(moto.endpoint));
    secretArn = (await client.send(new CreateSecretCommand({ Name: 'oauth/provider-a', SecretString: CLIENT_SECRET }))).ARN!;
    await provider.start();
    platform = await startTestPlatform({
      logLines,
      // The cloud wiring's adapter (functions/cloud.ts), pointed at moto.
      secrets: createSecretsManagerReader(client),
      env: {
        OAUTH_PROVIDER_A_AUTHORIZE_URL: `${provider.url}/authorize`,
        OAUTH_PROVIDER_A_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: secretArn,
        OAUTH_PROVIDER_B_AUTHORIZE_URL: `${provider.url}/authorize`,
        OAUTH_PROVIDER_B_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_B_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_B_CLIENT_SECRET_ARN: MISSING_SECRET_ARN,
      },
    });
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await provider.stop();
    await moto?.stop();
  });

  it('links an account with the secret read from Secrets Manager, which appears in no answer and no log line', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'cloudlinker' });
    const exchangesBefore = provider.exchanges;

    // Act
    const started = await platform.api('GET', '/oauth/authorize/provider_a', { token: user.token });
    const grant = provider.register('code-cloud', started.body.data.authorizationUrl);
    const done = await platform.api('GET', `/oauth/callback/provider_a?code=code-cloud&state=${started.body.data.state}`);

    // Assess: the fake provider answers 401 invalid_client unless Basic carries exactly CLIENT_SECRET.
    expect(started.status, started.text).toBe(200);
    expect(done.status, done.text).toBe(200);
    expect(done.body.data).toMatchObject({ provider: 'provider_a', stored: ['provider_a', 'provider_a_refresh'] });
    expect(provider.exchanges).toBe(exchangesBefore + 1);
    expect(grant.accessToken).toBeTruthy();
    for (const text of [started.text, done.text, ...logLines]) {
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain(secretArn);
    }
  });

  it('answers 502 when the secret cannot be read, without contacting the provider, and logs the setting by name', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'unreadable' });
    const started = await platform.api('GET', '/oauth/authorize/provider_b', { token: user.token });
    const exchangesBefore = provider.exchanges;

    // Act
    const done = await platform.api('GET', `/oauth/callback/provider_b?code=code-b&state=${started.body.data.state}`);

    // Assess
    expect(started.status, started.text).toBe(200);
    expect(done.status).toBe(502);
    expect(done.body).toMatchObject({ code: 'OAUTH_CLIENT_SECRET_UNAVAILABLE', error: expect.stringContaining('OAUTH_PROVIDER_B_CLIENT_SECRET_ARN') });
    expect(done.text).not.toContain(MISSING_SECRET_ARN);
    expect(provider.exchanges).toBe(exchangesBefore);
    const logged = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l['message'] === 'oauth client secret could not be read');
    expect(logged).toMatchObject({
      level: 'error',
      provider: 'provider_b',
      setting: 'OAUTH_PROVIDER_B_CLIENT_SECRET_ARN',
      error: expect.stringContaining('ResourceNotFoundException'),
    });
  });
});

describe('OAuth client secret ARN on the local platform', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({
      env: {
        OAUTH_PROVIDER_A_AUTHORIZE_URL: 'https://auth.example.com/authorize',
        OAUTH_PROVIDER_A_TOKEN_URL: 'https://auth.example.com/token',
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: MISSING_SECRET_ARN,
        OAUTH_PROVIDER_B_AUTHORIZE_URL: 'https://auth.example.com/authorize',
        OAUTH_PROVIDER_B_TOKEN_URL: 'https://auth.example.com/token',
        OAUTH_PROVIDER_B_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_B_CLIENT_SECRET: CLIENT_SECRET,
        OAUTH_PROVIDER_B_CLIENT_SECRET_ARN: MISSING_SECRET_ARN,
      },
    });
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it('refuses a provider whose secret is given by ARN with a 400 saying it is for the cloud, and one with both', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'localarn' });

    // Act
    const byArn = await platform.api('GET', '/oauth/authorize/provider_a', { token: user.token });
    const both = await platform.api('GET', '/oauth/authorize/provider_b', { token: user.token });

    // Assess
    expect(byArn.status).toBe(400);
    expect(byArn.body).toMatchObject({ code: 'OAUTH_PROVIDER_NOT_CONFIGURED' });
    expect(byArn.body.error).toContain(
      'OAUTH_PROVIDER_A_CLIENT_SECRET_ARN (a Secrets Manager secret) is only supported in the cloud; on the local platform set OAUTH_PROVIDER_A_CLIENT_SECRET instead.',
    );
    expect(both.status).toBe(400);
    expect(both.body.error).toContain('set only one of OAUTH_PROVIDER_B_CLIENT_SECRET and OAUTH_PROVIDER_B_CLIENT_SECRET_ARN');
    for (const text of [byArn.text, both.text]) {
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain(MISSING_SECRET_ARN);
    }
  });
});
