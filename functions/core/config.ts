import { z } from 'zod';

const optionalUrl = z.url().optional();
/** OAuth endpoints are fetched or opened in a browser, so only web URLs make sense. */
const optionalWebUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional();

const configSchema = z.object({
  STAGE: z.string().min(1).default('local'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  TABLE_PREFIX: z.string().min(1),
  BUCKET_PREFIX: z.string().min(1),
  /** Local stand-ins (dynalite, s3rver); absent in the cloud. */
  DYNAMODB_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  /** Public host URLs. Absent ones are derived from the request (cloud API Gateway stage URL). */
  BASE_URL: optionalUrl,
  STREAM_URL: optionalUrl,
  MCP_URL: optionalUrl,
  VOICE_URL: optionalUrl,
  CDN_URL: optionalUrl,
  SITE_URL: optionalUrl,
  CODE_URL: optionalUrl,
  PLATFORM_VERSION: z.string().min(1).default('0.1.0'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  COGNITO_USER_POOL_ID: z.string().min(1).optional(),
  COGNITO_CLIENT_ID: z.string().min(1).optional(),
  /** The runtime Lambda that runs Python user code (cloud). */
  RUNTIME_FUNCTION_NAME: z.string().min(1).optional(),
  /** The MCP runtime Lambda (tenant-isolation mode) that runs user MCP servers (cloud). */
  MCP_RUNTIME_FUNCTION_NAME: z.string().min(1).optional(),
  /** Secrets Manager secret whose value keys the HMAC of run tokens (cloud). */
  RUN_TOKEN_SECRET_ARN: z.string().min(1).optional(),
  /**
   * The SQS queues of the queue entry points a function may send to (cloud): a JSON object of
   * entry-point id to queue URL, set by the stack for its own area's queues only.
   */
  TASK_QUEUES: z.string().min(1).optional(),
  /** The dead-letter queues of a queue consumer's entry points (cloud), JSON like TASK_QUEUES: where it sets aside unreadable tasks. */
  TASK_DEAD_LETTER_QUEUES: z.string().min(1).optional(),
  /** KMS key that wraps the data keys of stored third-party keys (cloud). */
  KEYS_KMS_KEY_ID: z.string().min(1).optional(),
  /** Credits added once per calendar month (UTC) on an account's first activity; 0 turns it off. */
  MONTHLY_FREE_CREDITS: z.coerce.number().min(0).max(1_000_000).default(0),
  USAGE_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Run time a chat pays ahead with each debit while it runs (see core/credit-meter.ts): longer
   * means fewer ledger lines, shorter means less held at a time. Whatever the length, a run may use
   * its whole balance: a stretch the balance cannot pay in full is paid in part.
   */
  CHAT_BILLING_TICK_SEC: z.coerce.number().min(0.1).max(300).default(10),
  /**
   * OAuth providers (SPEC 4.13). One counts as configured when its authorize URL, token URL and
   * client id are set; the secret is optional (public clients rely on PKCE alone) and comes either
   * as the value (`_CLIENT_SECRET`, local use) or as the ARN of a Secrets Manager secret holding it
   * (`_CLIENT_SECRET_ARN`, cloud only; read when first needed), never both; scopes are space or
   * comma separated.
   */
  OAUTH_PROVIDER_A_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_A_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_A_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_SCOPES: z.string().optional(),
  OAUTH_PROVIDER_B_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_B_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_B_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_SCOPES: z.string().optional(),
  OAUTH_PROVIDER_C_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_C_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_C_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_SCOPES: z.string().optional(),
});

export type Config = Readonly<z.infer<typeof configSchema>>;

export class ConfigError extends Error {}

/**
 * Validates configuration once, at start. Fails with one message naming every bad variable, so a
 * misconfigured function or local start stops immediately instead of failing on some later request.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid platform configuration: ${problems}`);
  }
  return Object.freeze(result.data);
}

let cached: Config | undefined;

/** Configuration from `process.env`, read once per process (cloud functions). */
export function configFromEnv(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}
