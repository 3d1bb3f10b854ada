/**
 * The console's cloud sign-in (e-mail and password against the stack's user pool) in Chromium,
 * against moto's Cognito with its CORS, served as the cloud serves it: the built files from a
 * static origin of their own with a `config.json` naming the API (the real local platform, which
 * trusts moto's ID tokens) and the app client, and the console's CSP header.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCognitoVerifier } from '../../functions/core/auth/cognito.ts';
import { buildConsole, CONSOLE_CSP } from '../../lib/console/build-console.ts';
import type { ConsoleConfig } from '../../lib/console/console-config.ts';
import { CHROMIUM, expectAccessible, HAS_CHROMIUM } from '../support/console-browser.ts';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

describe.skipIf(!HAS_CHROMIUM || !motoAvailable())('console sign-in with the user pool (moto Cognito)', () => {
  let moto: MotoServer;
  let platform: TestPlatform;
  let cdn: Server;
  let consoleUrl: string;
  let browser: Browser;
  let userPoolId: string;
  let cognito: CognitoIdentityProviderClient;

  beforeAll(async () => {
    moto = await startMoto();
    cognito = new CognitoIdentityProviderClient(motoClientConfig(moto.endpoint));
    const pool = await cognito.send(new CreateUserPoolCommand({ PoolName: 'console-users', UsernameAttributes: ['email'] }));
    userPoolId = pool.UserPool!.Id!;
    const client = await cognito.send(
      new CreateUserPoolClientCommand({
        UserPoolId: userPoolId,
        ClientName: 'AppClient',
        ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      }),
    );
    const clientId = client.UserPoolClient!.ClientId!;
    const jwks = (await (await fetch(`${moto.endpoint}/${userPoolId}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    platform = await startTestPlatform({ identity: createCognitoVerifier({ userPoolId, clientId, jwks }) });
    // What lib/cloud/console-deployment.ts puts in the bucket, config.json included.
    const config: ConsoleConfig = {
      apiUrl: platform.url,
      signIn: { kind: 'cognito', region: 'us-east-1', userPoolClientId: clientId, endpoint: `${moto.endpoint}/` },
    };
    const files = new Map((await buildConsole()).map((f) => [`/console/${f.path}`, f]));
    cdn = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/console/config.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(config));
      const file = files.get(path === '/console/' ? '/console/index.html' : path);
      if (file === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': file.contentType, 'content-security-policy': CONSOLE_CSP }).end(file.body);
    });
    await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
    consoleUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/console/`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    cdn?.close();
    await platform?.stop({ removeData: true });
    await moto?.stop();
  });

  it('signs an invited user in: the temporary password, a new one, then the home page on the API of another origin', async () => {
    // Prepare
    await cognito.send(new AdminCreateUserCommand({ UserPoolId: userPoolId, Username: 'carol@example.com', MessageAction: 'SUPPRESS' }));
    await cognito.send(
      new AdminSetUserPasswordCommand({ UserPoolId: userPoolId, Username: 'carol@example.com', Password: 'Temporary-Pass-1', Permanent: false }),
    );
    const page = await browser.newPage();
    await page.goto(consoleUrl);

    // Act: a wrong password first
    await page.getByLabel('E-mail', { exact: true }).fill('carol@example.com');
    await page.getByLabel('Password', { exact: true }).fill('Wrong-Pass-1');
    await page.getByRole('button', { name: 'Sign in' }).click();

    // Assess
    await page.getByRole('alert').filter({ hasText: 'Not signed in' }).waitFor();

    // Act: the temporary password, then the new one Cognito asks for
    await page.getByLabel('Password', { exact: true }).fill('Temporary-Pass-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Choose a new password').fill('My-Own-Passw0rd!');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Continue' }).click();

    // Assess
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    await page.getByText('carol@example.com').or(page.getByText('no alias yet')).first().waitFor();
    await expect.poll(() => page.locator('.card').first().textContent()).toMatch(/Credits\s*\d/);
    await page.close();
  });
});
