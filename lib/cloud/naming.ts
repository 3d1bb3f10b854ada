import type { Stack } from 'aws-cdk-lib';
import { buckets } from '../manifest/index.ts';

/**
 * Longest region name the bucket-name budget allows for (`ap-southeast-5`, `eusc-de-east-1`).
 * The region is a deploy-time token in an environment-agnostic stack, so the check below has to
 * assume the worst case.
 */
const MAX_REGION_LENGTH = 14;
const ACCOUNT_ID_LENGTH = 12;
const MAX_BUCKET_NAME_LENGTH = 63;

/** Stage: part of the API stage path and of STAGE; API Gateway allows letters, digits, `-`, `_`. */
export function validateStage(stage: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stage)) throw new Error(`Invalid stage "${stage}": use 1-64 letters, digits, "-" or "_".`);
  return stage;
}

/**
 * The stack name prefixes every table and bucket, so it must also be valid inside a bucket name
 * once lower-cased, and short enough that the longest bucket name stays within S3's 63 characters.
 */
export function validateStackName(stackName: string): string {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(stackName) || stackName.endsWith('-')) {
    throw new Error(`Invalid stack name "${stackName}": start with a letter, then letters, digits or single hyphens.`);
  }
  const longestBucket = Math.max(...buckets.map((b) => b.name.length));
  const budget = MAX_BUCKET_NAME_LENGTH - longestBucket - ACCOUNT_ID_LENGTH - MAX_REGION_LENGTH - 3;
  if (stackName.length > budget) {
    throw new Error(`Stack name "${stackName}" is too long: bucket names include it with the account and region; use at most ${budget} characters.`);
  }
  return stackName;
}

/** Physical table names are `<TABLE_PREFIX><table>`; DynamoDB names are per account and region. */
export function tablePrefixFor(stackName: string): string {
  return `${stackName}-`;
}

/**
 * Physical bucket names are `<BUCKET_PREFIX><bucket>`. S3 names are global, so the prefix carries
 * the account and region (deploy-time tokens in an environment-agnostic stack).
 */
export function bucketPrefixFor(stack: Stack): string {
  return `${stack.stackName.toLowerCase()}-${stack.account}-${stack.region}-`;
}
