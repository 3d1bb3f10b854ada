/**
 * Signing in to a deployed stack with the CLI (bin/cli/commands/cloud.ts), against the Cognito,
 * CloudFormation and DynamoDB APIs of the moto server with the real AWS SDK: the operator invites
 * an account, its first `login --stack` changes the temporary password and stores an ID token the
 * real local platform accepts (verified against moto's JWKS), and `cloud promote` makes it an operator.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import {
  AdminGetUserCommand,
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCognitoVerifier } from '../../functions/core/auth/cognito.ts';
import { runCli, type CliResult } from '../support/cli.ts';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const STACK = 'agent-platform-signin';
const TABLE_PREFIX = `${STACK}-`;

describe.skipIf(!motoAvailable())('CLI sign-in to a deployed stack (moto Cognito, the real SDK)', () => {
  let moto: MotoServer;
  let platform: TestPlatform;
  let configHome: string;
  let userPoolId: string;
  let cognito: CognitoIdentityProviderClient;
  let dynamo: DynamoDBClient;

  /** The CLI with moto as every AWS endpoint and its own config directory. */
  const cli = (args: readonly string[], input?: string): Promise<CliResult> =>
    runCli(args, {
      env: {
        XDG_CONFIG_HOME: configHome,
        AWS_ENDPOINT_URL: moto.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_PROFILE: '',
      },
      ...(input === undefined ? {} : { input }),
    });

  beforeAll(async () => {
    moto = await startMoto();
    configHome = await mkdtemp(join(tmpdir(), 'cloud-signin-'));
    cognito = new CognitoIdentityProviderClient(motoClientConfig(moto.endpoint));
    dynamo = new DynamoDBClient(motoClientConfig(moto.endpoint));
    // The stack's sign-in, as lib/cloud/identity.ts makes it: email user names, the password flow allowed.
    const pool = await cognito.send(new CreateUserPoolCommand({ PoolName: `${STACK}-users`, UsernameAttributes: ['email'] }));
    userPoolId = pool.UserPool!.Id!;
    const client = await cognito.send(
      new CreateUserPoolClientCommand({
        UserPoolId: userPoolId,
        ClientName: 'AppClient',
        ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      }),
    );
    const clientId = client.UserPoolClient!.ClientId!;
    // The real local platform, trusting ID tokens of moto's pool (its JWKS, fetched once).
    const jwks = (await (await fetch(`${moto.endpoint}/${userPoolId}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    platform = await startTestPlatform({ identity: createCognitoVerifier({ userPoolId, clientId, jwks }) });
    // A stack with the outputs the CLI reads (lib/cloud/platform-stack.ts).
    const output = (key: string, value: string) => [key, { Value: value }];
    await new CloudFormationClient(motoClientConfig(moto.endpoint)).send(
      new CreateStackCommand({
        StackName: STACK,
        TemplateBody: JSON.stringify({
          Resources: { Marker: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries([
            output('BaseUrl', platform.url),
            output('UserPoolId', userPoolId),
            output('UserPoolClientId', clientId),
            output('TablePrefix', TABLE_PREFIX),
          ]),
        }),
      }),
    );
    await dynamo.send(
      new CreateTableCommand({
        TableName: `${TABLE_PREFIX}users`,
        KeySchema: [{ AttributeName: 'userId', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'userId', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await moto?.stop();
    await rm(configHome, { recursive: true, force: true });
  });

  it('invites an account, whose first login changes the temporary password and stores an ID token the platform accepts', async () => {
    // Prepare
    const invited = await cli(['cloud', 'invite', 'first@example.com', '--stack', STACK, '--json']);
    expect(invited.stderr).toBe('');
    expect(invited.code).toBe(0);
    const created = await cognito.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: 'first@example.com' }));
    expect(created.UserStatus).toBe('FORCE_CHANGE_PASSWORD');
    // moto keeps the temporary password it generated; the operator would read it from the email. Set a known one instead.
    const { AdminSetUserPasswordCommand } = await import('@aws-sdk/client-cognito-identity-provider');
    await cognito.send(
      new AdminSetUserPasswordCommand({ UserPoolId: userPoolId, Username: 'first@example.com', Password: 'Temporary-Pass-1', Permanent: false }),
    );

    // Act: the temporary password, then the new one, one a line on stdin.
    const login = await cli(['login', '--stack', STACK, '--email', 'first@example.com', '--json'], 'Temporary-Pass-1\nMy-Own-Passw0rd!\n');

    // Assess
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    const summary = JSON.parse(login.stdout) as { url: string; userId: string; email: string; isAdmin: boolean };
    expect(summary).toMatchObject({ url: platform.url, email: 'first@example.com', isAdmin: false });
    const sub = created.UserAttributes!.find((a) => a.Name === 'sub')!.Value!;
    expect(summary.userId).toBe(sub);
    const stored = JSON.parse(await readFile(join(configHome, 'agent-platform', 'credentials.json'), 'utf8')) as { url: string; token: string };
    const info = await platform.api('GET', '/user/info', { token: stored.token });
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({ userId: sub, email: 'first@example.com' });
    // The password changed: the temporary one no longer signs in, the new one does without a challenge.
    const again = await cli(['login', '--stack', STACK, '--email', 'first@example.com'], 'My-Own-Passw0rd!\n');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Logged in to');
    const stale = await cli(['login', '--stack', STACK, '--email', 'first@example.com'], 'Temporary-Pass-1\nAnother-Passw0rd!\n');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/Sign-in failed/);
  }, 120_000);

  it('makes an account that signed in once an operator, and refuses one that has not', async () => {
    // Prepare: one account with its record (as its first request makes it), one without.
    await cli(['cloud', 'invite', 'op@example.com', '--stack', STACK]);
    await cli(['cloud', 'invite', 'never@example.com', '--stack', STACK]);
    const op = await cognito.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: 'op@example.com' }));
    const sub = op.UserAttributes!.find((a) => a.Name === 'sub')!.Value!;
    await dynamo.send(new PutItemCommand({ TableName: `${TABLE_PREFIX}users`, Item: { userId: { S: sub }, isAdmin: { BOOL: false } } }));

    // Act
    const promoted = await cli(['cloud', 'promote', 'op@example.com', '--stack', STACK]);
    const refused = await cli(['cloud', 'promote', 'never@example.com', '--stack', STACK]);
    const unknown = await cli(['cloud', 'promote', 'nobody@example.com', '--stack', STACK]);

    // Assess
    expect(promoted.stderr).toBe('');
    expect(promoted.code).toBe(0);
    const record = await dynamo.send(new GetItemCommand({ TableName: `${TABLE_PREFIX}users`, Key: { userId: { S: sub } } }));
    expect(record.Item?.['isAdmin']).toEqual({ BOOL: true });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/has not signed in yet/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No account nobody@example.com/);
  }, 120_000);

  it('names the missing stack and refuses --stack with --token', async () => {
    // Act
    const missing = await cli(['login', '--stack', 'no-such-stack', '--email', 'a@example.com'], 'x\n');
    const both = await cli(['login', '--stack', STACK, '--token', 'abc']);

    // Assess
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no-such-stack/);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--stack or --token/);
  }, 60_000);
});
