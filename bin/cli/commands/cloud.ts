import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  AdminCreateUserCommand,
  AdminGetUserCommand,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  RespondToAuthChallengeCommand,
  UsernameExistsException,
  type AuthenticationResultType,
  type InitiateAuthCommandOutput,
} from '@aws-sdk/client-cognito-identity-provider';
import { ConditionalCheckFailedException, DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { expectArgs, type Context } from '../args.ts';
import { storeLogin } from '../config.ts';
import { CliError, UsageError } from '../errors.ts';
import { connectTo, dataOrFail } from '../http.ts';
import { readSecret } from '../input.ts';
import { printJson } from '../output.ts';

/**
 * The deployed stack, for the commands that need AWS credentials or Cognito rather than a platform
 * token: `login --stack` (sign in with the pool's password flow), `cloud invite` and `cloud promote`
 * (the operator's first steps). The stack's outputs say where everything is (lib/cloud/platform-stack.ts);
 * the region and credentials are the AWS SDK's usual ones (AWS_REGION, AWS_PROFILE, ~/.aws).
 */

/** The outputs of the platform stack these commands read. */
export interface StackOutputs {
  readonly baseUrl: string;
  readonly userPoolId: string;
  readonly clientId: string;
  readonly tablePrefix: string | undefined;
}

function clientSettings(region: string | undefined) {
  return region === undefined ? {} : { region };
}

export async function readStackOutputs(stackName: string, region: string | undefined): Promise<StackOutputs> {
  const client = new CloudFormationClient(clientSettings(region));
  let outputs: Record<string, string>;
  try {
    const found = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = found.Stacks?.[0];
    if (stack === undefined) throw new CliError(`Stack ${stackName} was not found.`);
    outputs = Object.fromEntries(
      (stack.Outputs ?? []).flatMap((o) => (o.OutputKey !== undefined && o.OutputValue !== undefined ? [[o.OutputKey, o.OutputValue]] : [])),
    );
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`Cannot read stack ${stackName}: ${(error as Error).message}`);
  } finally {
    client.destroy();
  }
  const need = (key: string) => {
    const value = outputs[key];
    if (value === undefined) throw new CliError(`Stack ${stackName} has no output ${key}: is it an agent platform stack, fully deployed?`);
    return value;
  };
  return {
    baseUrl: need('BaseUrl').replace(/\/+$/, ''),
    userPoolId: need('UserPoolId'),
    clientId: need('UserPoolClientId'),
    tablePrefix: outputs['TablePrefix'],
  };
}

/**
 * Answers from standard input, one a line: from a terminal each prompted for without echo; from a
 * pipe all read at once (`printf '%s\n' "$PASSWORD" "$NEW_PASSWORD" | agent-platform login --stack ...`).
 */
function answers(): (prompt: string) => Promise<string> {
  let piped: string[] | undefined;
  return async (prompt) => {
    if (process.stdin.isTTY) return (await readSecret(prompt)).trim();
    piped ??= (await readSecret(prompt)).split(/\r?\n/);
    const next = piped.shift();
    if (next === undefined || next.trim() === '') throw new CliError(`Nothing on standard input for "${prompt.trim()}".`);
    return next.trim();
  };
}

/**
 * Signs in with the user pool's password flow (USER_PASSWORD_AUTH), answering the challenges a
 * first sign-in or an authenticator app brings, and returns the ID token.
 */
export async function signIn(
  outputs: Pick<StackOutputs, 'userPoolId' | 'clientId'>,
  email: string,
  ask: (prompt: string) => Promise<string>,
  region: string | undefined,
): Promise<AuthenticationResultType> {
  // The pool's region is in its id (`eu-west-1_AbC...`), whatever the profile's.
  const client = new CognitoIdentityProviderClient(clientSettings(region ?? outputs.userPoolId.split('_')[0]));
  try {
    let step: InitiateAuthCommandOutput = await client.send(
      new InitiateAuthCommand({
        AuthFlow: 'USER_PASSWORD_AUTH',
        ClientId: outputs.clientId,
        AuthParameters: { USERNAME: email, PASSWORD: await ask('Password: ') },
      }),
    );
    for (let challenges = 0; step.AuthenticationResult === undefined; challenges++) {
      if (challenges >= 3) throw new CliError(`Sign-in did not finish (challenge ${step.ChallengeName ?? 'none'}).`);
      const responses: Record<string, string> = { USERNAME: email };
      if (step.ChallengeName === 'NEW_PASSWORD_REQUIRED') responses['NEW_PASSWORD'] = await ask('First sign-in: choose a new password: ');
      else if (step.ChallengeName === 'SOFTWARE_TOKEN_MFA') responses['SOFTWARE_TOKEN_MFA_CODE'] = await ask('Authenticator code: ');
      else throw new CliError(`Sign-in asks for ${step.ChallengeName ?? 'an unknown challenge'}, which this CLI cannot answer; sign in another way once.`);
      step = await client.send(
        new RespondToAuthChallengeCommand({
          ClientId: outputs.clientId,
          ChallengeName: step.ChallengeName,
          Session: step.Session,
          ChallengeResponses: responses,
        }),
      );
    }
    if (step.AuthenticationResult.IdToken === undefined) throw new CliError('Cognito returned no ID token.');
    return step.AuthenticationResult;
  } catch (error) {
    if (error instanceof CliError) throw error;
    // Cognito's own words (NotAuthorizedException: Incorrect username or password.) are the clearest.
    throw new CliError(`Sign-in failed: ${(error as Error).message}`);
  } finally {
    client.destroy();
  }
}

/** `login --stack S --email E`: signs in with Cognito and stores the ID token for the stack's API, checked with `GET /user/info` (which also makes the account on a first sign-in). */
export async function loginToStack(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const { values, output } = context;
  const stack = values.stack!;
  if (values.token !== undefined) throw new UsageError('login takes --stack or --token, not both.');
  const email = values.email ?? (await answers()('Email: '));
  const outputs = await readStackOutputs(stack, values.region);
  const result = await signIn(outputs, email, answers(), values.region);
  const url = values.url ?? outputs.baseUrl;
  const token = result.IdToken!;
  const user = await dataOrFail(connectTo(url, token).api.GET('/user/info'));
  const file = await storeLogin({ url, token });
  const hours = Math.round((result.ExpiresIn ?? 3600) / 360) / 10;
  if (output.json) {
    printJson({ url, userId: user.userId, email: user.email, isAdmin: user.isAdmin, expiresInSec: result.ExpiresIn ?? null, credentialsFile: file });
    return 0;
  }
  console.log(`Logged in to ${url} as ${user.email ?? email} (${user.userId})${user.isAdmin ? ', an operator' : ''}.`);
  console.log(`Stored in ${file}; the sign-in lasts ${hours} h, then run login --stack again.`);
  return 0;
}

/** `cloud invite <email> --stack S`: creates the Cognito account; Cognito emails a temporary password, changed at the first `login --stack`. */
export async function invite(context: Context): Promise<number> {
  const [email] = expectArgs(context, 1, 1, 'cloud invite needs the email address to invite.');
  const { values, output } = context;
  const outputs = await readStackOutputs(requireStack(values.stack), values.region);
  const client = new CognitoIdentityProviderClient(clientSettings(values.region ?? outputs.userPoolId.split('_')[0]));
  try {
    const created = await client.send(
      new AdminCreateUserCommand({
        UserPoolId: outputs.userPoolId,
        Username: email!,
        UserAttributes: [
          { Name: 'email', Value: email! },
          // The operator vouches for the address: Cognito sends the invitation to it.
          { Name: 'email_verified', Value: 'true' },
        ],
        DesiredDeliveryMediums: ['EMAIL'],
      }),
    );
    const sub = created.User?.Attributes?.find((a) => a.Name === 'sub')?.Value ?? null;
    if (output.json) printJson({ email, userId: sub, status: created.User?.UserStatus ?? null });
    else
      console.log(
        `Invited ${email}${sub === null ? '' : ` (${sub})`}: Cognito emailed a temporary password; they sign in with login --stack ${values.stack} --email ${email}.`,
      );
    return 0;
  } catch (error) {
    if (error instanceof UsernameExistsException) throw new CliError(`${email} already has an account in the pool.`);
    throw new CliError(`Cannot invite ${email}: ${(error as Error).message}`);
  } finally {
    client.destroy();
  }
}

/**
 * `cloud promote <email> --stack S`: makes the account an operator (isAdmin on its users record),
 * with the deployer's AWS credentials: the way to the first operator, who has no one to ask. The
 * account must have signed in once (its record is made then).
 */
export async function promote(context: Context): Promise<number> {
  const [email] = expectArgs(context, 1, 1, 'cloud promote needs the email address of the account to make an operator.');
  const { values, output } = context;
  const outputs = await readStackOutputs(requireStack(values.stack), values.region);
  if (outputs.tablePrefix === undefined) throw new CliError(`Stack ${values.stack} has no TablePrefix output: deploy this version of the platform first.`);
  const cognito = new CognitoIdentityProviderClient(clientSettings(values.region ?? outputs.userPoolId.split('_')[0]));
  const dynamo = new DynamoDBClient(clientSettings(values.region));
  try {
    const user = await cognito.send(new AdminGetUserCommand({ UserPoolId: outputs.userPoolId, Username: email! })).catch((error: Error) => {
      throw new CliError(`No account ${email} in the pool: ${error.message}`);
    });
    const sub = user.UserAttributes?.find((a) => a.Name === 'sub')?.Value;
    if (sub === undefined) throw new CliError(`Account ${email} has no sub attribute.`);
    await dynamo.send(
      new UpdateItemCommand({
        TableName: `${outputs.tablePrefix}users`,
        // The platform's account id is the Cognito sub (functions/users/credential-lookup.ts).
        Key: { userId: { S: sub } },
        UpdateExpression: 'SET isAdmin = :admin',
        ConditionExpression: 'attribute_exists(userId)',
        ExpressionAttributeValues: { ':admin': { BOOL: true } },
      }),
    );
    if (output.json) printJson({ email, userId: sub, isAdmin: true });
    else console.log(`${email} (${sub}) is now an operator.`);
    return 0;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      throw new CliError(`${email} has not signed in yet: run login --stack ${values.stack} --email ${email} once (it makes the account), then promote again.`);
    if (error instanceof CliError) throw error;
    throw new CliError(`Cannot promote ${email}: ${(error as Error).message}`);
  } finally {
    cognito.destroy();
    dynamo.destroy();
  }
}

function requireStack(stack: string | undefined): string {
  if (stack === undefined || stack.trim() === '') throw new UsageError('--stack names the deployed stack (e.g. agent-platform-dev).');
  return stack;
}
