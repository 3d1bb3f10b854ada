import * as z from 'zod';

/**
 * The deploy options of the cloud stack (cdk.json context or `-c key=value`), checked with zod at
 * synth so a typo fails there, not half way through a deployment. Every option has a default from
 * the stage's preset: `dev` (cheap, nothing left behind by `cdk destroy`) or `prod` (closed,
 * braked, logged, kept). docs/deploying.md lists them; test/infra/deploy-options.test.ts checks
 * each one on and off.
 */

/** CloudWatch Logs accepts only these retention periods (days). */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

/** `-c key=true` arrives as a string, cdk.json context as a boolean: both are accepted. */
const flag = z.preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean());
/** `-c key=90` arrives as a string, cdk.json context as a number. */
const whole = (min: number, max: number) =>
  z.preprocess((value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value), z.number().int().min(min).max(max));
const positive = z.preprocess((value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value), z.number().positive().max(100_000));
/** A JSON object given on the command line (`-c areaConcurrency='{"agents":50}'`) or an object in cdk.json. */
const jsonObject = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }, schema);
const certificateArn = z.string().regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'must be an ACM certificate ARN');

export const PRESETS = ['dev', 'prod'] as const;
export type Preset = (typeof PRESETS)[number];

const options = z
  .object({
    preset: z.enum(PRESETS),
    /** Anyone may create an account through Cognito's SignUp; off: operators invite (`agent-platform cloud invite`). */
    selfSignUp: flag,
    /** The voice bridge (a Fargate service, its load balancer, VPC and distribution): the stack's only idle cost. */
    voice: flag,
    /** An AWS WAF web ACL on the API stage: AWS managed common, known-bad-inputs and IP-reputation rules, and a rate limit per address. */
    waf: flag,
    /** Requests one address may make in any 5 minutes before WAF blocks it (WAF's rate-based rule). */
    wafRateLimit: whole(100, 2_000_000_000),
    /** API Gateway stage throttling: steady requests per second, and the burst above it. */
    apiRateLimit: positive,
    apiBurstLimit: whole(0, 100_000),
    /** Reserved concurrency of the Python runtime function (user agents and actions); 0 for none (the account's unreserved pool). */
    runtimeConcurrency: whole(0, 100_000),
    /** Reserved concurrency of the MCP runtime function (user MCP servers); 0 for none. */
    mcpRuntimeConcurrency: whole(0, 100_000),
    /** Reserved concurrency (a cap) per area function, by area name; areas not named have none. */
    areaConcurrency: jsonObject(z.record(z.string().regex(/^[a-z][a-z0-9-]*$/), whole(1, 100_000))),
    /** The account's Lambda concurrency quota, to check that the reservations leave the 100 Lambda requires unreserved. */
    accountConcurrency: whole(10, 1_000_000),
    /** Access logs: the API stage, every bucket, every CloudFront distribution and the load balancer. */
    accessLogs: flag,
    /** Days access logs are kept (a CloudWatch retention period; the log bucket expires objects after as many days). */
    accessLogRetentionDays: z.preprocess(
      (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
      z.number().refine((days) => (LOG_RETENTION_DAYS as readonly number[]).includes(days), `must be one of ${LOG_RETENTION_DAYS.join(', ')}`),
    ),
    /**
     * Creates API Gateway's account-wide CloudWatch role, which stage access logs need (kept when
     * the stack goes). Off when the account has one already (`aws apigateway get-account`).
     */
    apiGatewayCloudWatchRole: flag,
    /** `destroy`: `cdk destroy` removes every table, bucket (with its objects), key, log group and the user pool; `retain` keeps them. */
    removalPolicy: z.enum(['retain', 'destroy']),
    /** Days between rotations of the run-token signing secret; 0 never rotates it. */
    runTokenRotationDays: whole(0, 365),
    /** A custom domain: `api.`, `voice.` and `cdn.` under it (docs/decisions/0042-cloud-deployment-options.md). */
    domainName: z
      .string()
      .regex(/^(?=.{4,200}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/, 'must be a lower-case domain name like example.com')
      .optional(),
    /** ACM certificate in us-east-1 covering `voice.`, `cdn.` (CloudFront) of `domainName`; `*.domainName` does. */
    certificateArn: certificateArn.optional(),
    /** ACM certificate in the stack's region covering `api.` and `voice-origin.` of `domainName` (API Gateway, the load balancer). */
    regionalCertificateArn: certificateArn.optional(),
  })
  .strict();

export type DeployOptions = z.infer<typeof options>;

/** The presets: what each option is unless the context says otherwise. */
export const PRESET_DEFAULTS: Readonly<Record<Preset, Omit<DeployOptions, 'preset' | 'domainName' | 'certificateArn' | 'regionalCertificateArn'>>> = {
  dev: {
    selfSignUp: false,
    voice: false,
    waf: false,
    wafRateLimit: 2000,
    apiRateLimit: 20,
    apiBurstLimit: 40,
    // A new account's concurrency quota can be as low as 10: reserving any would fail the deploy.
    runtimeConcurrency: 0,
    mcpRuntimeConcurrency: 0,
    areaConcurrency: {},
    accountConcurrency: 1000,
    accessLogs: false,
    accessLogRetentionDays: 7,
    apiGatewayCloudWatchRole: false,
    removalPolicy: 'destroy',
    runTokenRotationDays: 0,
  },
  prod: {
    selfSignUp: false,
    voice: true,
    waf: true,
    wafRateLimit: 2000,
    apiRateLimit: 100,
    apiBurstLimit: 200,
    // User code together may take 300 of the default 1000; the platform's own functions keep 700.
    runtimeConcurrency: 200,
    mcpRuntimeConcurrency: 100,
    areaConcurrency: {},
    accountConcurrency: 1000,
    accessLogs: true,
    accessLogRetentionDays: 90,
    apiGatewayCloudWatchRole: true,
    removalPolicy: 'retain',
    // Functions verify under the secret's current and previous values and re-read it when a token
    // verifies under neither (secretsManagerKeyRing), so a rotation breaks no run.
    runTokenRotationDays: 30,
  },
};

/** The context keys this module reads (besides `stage`, which picks the preset when `preset` is absent). */
export const DEPLOY_OPTION_KEYS = Object.keys(options.shape) as (keyof DeployOptions)[];

/** Lambda keeps this many concurrent executions unreserved in every account. */
const LAMBDA_MIN_UNRESERVED = 100;

/**
 * The options of a stage: its preset (`preset`, else `dev` for the stage named dev, else `prod`)
 * overlaid with whatever `context` sets; absent and empty values take the preset's.
 */
export function resolveDeployOptions(stage: string, context: Readonly<Record<string, unknown>> = {}): DeployOptions {
  const given = Object.fromEntries(
    Object.entries(context).filter(
      ([key, value]) => DEPLOY_OPTION_KEYS.includes(key as keyof DeployOptions) && value !== undefined && value !== null && value !== '',
    ),
  );
  const preset = given['preset'] ?? (stage === 'dev' ? 'dev' : 'prod');
  const base = PRESET_DEFAULTS[preset as Preset] ?? {};
  const parsed = options.safeParse({ ...base, ...given, preset });
  if (!parsed.success)
    throw new Error(`Invalid deploy options: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`).join('; ')}`);
  return checkTogether(parsed.data);
}

function checkTogether(o: DeployOptions): DeployOptions {
  const reserved = o.runtimeConcurrency + o.mcpRuntimeConcurrency + Object.values(o.areaConcurrency).reduce((sum, n) => sum + n, 0);
  if (reserved > o.accountConcurrency - LAMBDA_MIN_UNRESERVED)
    throw new Error(
      `Invalid deploy options: ${reserved} reserved concurrent executions leave fewer than ${LAMBDA_MIN_UNRESERVED} of accountConcurrency ${o.accountConcurrency} unreserved; Lambda refuses that. Lower runtimeConcurrency, mcpRuntimeConcurrency or areaConcurrency, or raise the account's quota and accountConcurrency.`,
    );
  if (o.domainName === undefined && (o.certificateArn !== undefined || o.regionalCertificateArn !== undefined))
    throw new Error('Invalid deploy options: certificateArn and regionalCertificateArn need domainName.');
  if (o.domainName !== undefined && (o.certificateArn === undefined || o.regionalCertificateArn === undefined))
    throw new Error(
      "Invalid deploy options: domainName needs certificateArn (us-east-1, for CloudFront) and regionalCertificateArn (the stack's region, for API Gateway and the load balancer).",
    );
  if (o.domainName !== undefined && !/:acm:us-east-1:/.test(o.certificateArn!))
    throw new Error('Invalid deploy options: certificateArn must be in us-east-1, where CloudFront reads certificates.');
  return o;
}
