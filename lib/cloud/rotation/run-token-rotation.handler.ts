import {
  DescribeSecretCommand,
  GetRandomPasswordCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import * as z from 'zod';
import { RUN_TOKEN_SECRET_LENGTH } from './run-token-secret.ts';

/**
 * Secrets Manager's rotation function for the run-token secret (the four steps of a rotation):
 * a new random value as AWSPENDING, nothing to set anywhere else (only the platform's functions
 * read it), a check of its length, then AWSCURRENT moved to it, the old value staying AWSPREVIOUS.
 */
const rotationEvent = z.object({
  SecretId: z.string().min(1),
  ClientRequestToken: z.string().min(1),
  Step: z.enum(['createSecret', 'setSecret', 'testSecret', 'finishSecret']),
});

/** The run-token key derivation wants at least this many characters (functions/core/auth/run-token.ts). */
const MIN_LENGTH = 32;

export async function rotate(event: unknown, client: SecretsManagerClient): Promise<void> {
  const { SecretId, ClientRequestToken: token, Step } = rotationEvent.parse(event);
  const described = await client.send(new DescribeSecretCommand({ SecretId }));
  if (described.RotationEnabled === false) throw new Error(`Secret ${SecretId} does not have rotation enabled.`);
  const stages = described.VersionIdsToStages?.[token];
  if (stages === undefined) throw new Error(`Secret version ${token} is not a version of ${SecretId}.`);
  if (stages.includes('AWSCURRENT') && Step !== 'finishSecret') return;

  if (Step === 'createSecret') {
    try {
      await client.send(new GetSecretValueCommand({ SecretId, VersionId: token, VersionStage: 'AWSPENDING' }));
      return;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    const random = await client.send(new GetRandomPasswordCommand({ PasswordLength: RUN_TOKEN_SECRET_LENGTH, ExcludePunctuation: true, IncludeSpace: false }));
    await client.send(new PutSecretValueCommand({ SecretId, ClientRequestToken: token, SecretString: random.RandomPassword, VersionStages: ['AWSPENDING'] }));
  } else if (Step === 'testSecret') {
    const pending = await client.send(new GetSecretValueCommand({ SecretId, VersionId: token, VersionStage: 'AWSPENDING' }));
    if ((pending.SecretString ?? '').length < MIN_LENGTH) throw new Error(`The pending run-token secret is shorter than ${MIN_LENGTH} characters.`);
  } else if (Step === 'finishSecret') {
    const current = Object.entries(described.VersionIdsToStages ?? {}).find(([, s]) => s.includes('AWSCURRENT'))?.[0];
    if (current === token) return;
    await client.send(new UpdateSecretVersionStageCommand({ SecretId, VersionStage: 'AWSCURRENT', MoveToVersionId: token, RemoveFromVersionId: current }));
  }
  // setSecret: the value lives in Secrets Manager alone; there is nothing else to set.
}

const client = new SecretsManagerClient({});

export async function handler(event: unknown): Promise<void> {
  await rotate(event, client);
}
