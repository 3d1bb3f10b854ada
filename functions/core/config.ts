import { isIP, isIPv6 } from 'node:net';
import * as z from 'zod';
import type { ListedArea } from './area-list.ts';

const optionalUrl = z.url().optional();

/**
 * A public URL setting: absolute, with one of `schemes`, without query or fragment (the platform
 * appends paths to it), trailing slashes removed so `${url}/path` never doubles one.
 */
export function publicUrlSetting(schemes: readonly string[] = ['http', 'https']) {
  const expected = `an absolute ${schemes.join(' or ')} URL without query or fragment, e.g. ${schemes.includes('https') ? 'https' : schemes.at(-1)}://abc.trycloudflare.com`;
  return z.string().transform((text, ctx) => {
    const url = URL.canParse(text) ? new URL(text) : null;
    if (url === null || !schemes.includes(url.protocol.slice(0, -1)) || url.search !== '' || url.hash !== '' || text.includes('?') || text.includes('#')) {
      ctx.addIssue({ code: 'custom', message: `'${text}' is not ${expected}` });
      return z.NEVER;
    }
    if (url.username !== '' || url.password !== '') {
      ctx.addIssue({ code: 'custom', message: `must not carry credentials (it is shown to clients)` });
      return z.NEVER;
    }
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  });
}

/**
 * What one entry of a host list may be (the egress proxy's grammar, functions/runtimes/egress-proxy.ts):
 * `*`, `host`, `*.domain`, `[v6]`, each optionally with `:port`. An address or `localhost` must
 * carry its port: the proxy lets a name-based entry reach only public addresses, and reaches a
 * private one (a model server on loopback or the operator's network) only when named exactly.
 * Null when the entry is valid, else why not.
 */
export function hostEntryProblem(entry: string): string | null {
  if (entry === '*') return null;
  const text = entry.toLowerCase();
  let host: string;
  let port: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    host = close < 0 ? '' : text.slice(1, close);
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (close < 0 || !isIPv6(host) || (rest !== '' && !rest.startsWith(':'))) return 'is not a valid [IPv6]:port entry';
    if (rest !== '') port = rest.slice(1);
  } else if (isIPv6(text)) {
    host = text;
  } else {
    const colon = text.lastIndexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    port = colon < 0 ? null : text.slice(colon + 1);
    host = host.replace(/\.$/, '');
    const name = host.startsWith('*.') ? host.slice(2) : host;
    if (!/^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/.test(name)) return 'is not a host name, *.domain, address or host:port';
  }
  if (port !== null && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)) return 'has a port that is not 1 to 65535';
  if (port === null && (isIP(host) !== 0 || host === 'localhost'))
    return 'is an address without a port: list a local or private server as host:port (e.g. 127.0.0.1:11434)';
  return null;
}

/**
 * A comma-separated host list setting (`MCP_EGRESS_ALLOW_HOSTS`, `AGENT_MODEL_HOSTS`): entries
 * trimmed, empty ones dropped (so an empty value means none), each checked by `hostEntryProblem`
 * so a typo stops the start naming the entry instead of silently matching nothing.
 */
export const hostListSetting = z.string().transform((text, ctx) => {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const problem = hostEntryProblem(entry);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: `'${entry}' ${problem}` });
  }
  return entries;
});

/**
 * The model endpoints agents and voice agents may reach by default: Amazon Bedrock and the public
 * APIs of OpenAI, Anthropic and Google (Gemini). Local model servers are added by the operator.
 */
export const DEFAULT_AGENT_MODEL_HOSTS: readonly string[] = ['*.amazonaws.com', 'api.openai.com', 'api.anthropic.com', 'generativelanguage.googleapis.com'];

/** What each public host URL setting means; one text, so the reference shows the seven as one row. */
const HOST_URL_MEANING =
  "One host's public URL (`BASE_URL` the API, `STREAM_URL` streaming, `MCP_URL` MCP, `VOICE_URL` voice, which may be `ws(s)://`, `CDN_URL` the widget, `SITE_URL` users' sites, `CODE_URL` code servers) where it differs from what `PUBLIC_URL` (or the local address) gives; a set value wins over the derived one. A host no area serves stays unset whatever is set. With `SITE_URL` set, sites are paths of it unless `SITE_ALIAS_ORIGINS=true`. In the cloud the stack sets those it knows; the others derive from each request";

/**
 * The kernel's settings; each area module adds its own (`settings`), checked by the same parse.
 * Each carries its meaning for the configuration reference (core/setting-meta.ts).
 */
export const kernelSchema = z.object({
  STAGE: z.string().min(1).default('local').meta({
    description: 'The stage name, in logs and the API stage: `local` locally, the `stage` deploy option in the cloud',
    setBy: 'wiring',
    deployOption: 'stage',
  }),
  AWS_REGION: z.string().min(1).default('us-east-1').meta({
    description: "The AWS region of the tables, buckets and functions: the functions' own in the cloud, `us-east-1` locally (the stores are stand-ins)",
    setBy: 'wiring',
  }),
  TABLE_PREFIX: z.string().min(1).meta({ description: "Prefix of the physical names of the manifest's tables", setBy: 'wiring' }),
  BUCKET_PREFIX: z.string().min(1).meta({ description: "Prefix of the physical names of the manifest's buckets", setBy: 'wiring' }),
  DYNAMODB_ENDPOINT: optionalUrl.meta({ description: 'The local DynamoDB stand-in (dynalite) the local platform starts; absent in the cloud', setBy: 'local' }),
  S3_ENDPOINT: optionalUrl.meta({ description: 'The local S3 stand-in (s3rver) the local platform starts; absent in the cloud', setBy: 'local' }),
  LOCAL_STORES_ACCESS_KEY_ID: z.string().min(1).optional().meta({
    description: 'The credentials requests to the local stores are signed with, made at each start',
    setBy: 'local',
  }),
  LOCAL_STORES_SECRET_ACCESS_KEY: z.string().min(1).optional().meta({
    description: 'The credentials requests to the local stores are signed with, made at each start',
    setBy: 'local',
  }),
  BASE_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  STREAM_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  MCP_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  VOICE_URL: publicUrlSetting(['ws', 'wss', 'http', 'https']).optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  CDN_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  SITE_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  CODE_URL: publicUrlSetting().optional().meta({ description: HOST_URL_MEANING, whenUnset: 'derived' }),
  // Every host URL derives from it as from the local server's (lib/local/platform.ts).
  PUBLIC_URL: publicUrlSetting()
    .optional()
    .describe(
      "Where outside services and clients reach the platform, e.g. a tunnel's `https://abc.trycloudflare.com` (absolute http(s), no query or fragment; a trailing `/` is dropped; anything else stops the start with a message naming it). Webhooks, `webhookUrl`, TwiML stream URLs, discovery and signature checks use it. Each host derives from it as from the local address: the API and MCP at the root, `/stream`, `wss://…/voice`, `/cdn`. The site host stays on `SITE_PORT`. It wins over forwarded headers",
    ),
  // Only behind a proxy that sets these headers: a client reaching the platform directly could
  // otherwise choose the URLs it is given and that signatures are checked over.
  TRUST_FORWARDED_HEADERS: z
    .stringbool()
    .default(false)
    .describe(
      "`true`: each request's URLs come from its proxy's `Forwarded` / `X-Forwarded-Host` / `X-Forwarded-Proto` (else `Host`), for a tunnel whose name changes. Only behind a proxy that sets these headers itself. `PUBLIC_URL` wins when both are set",
    ),
  LOCAL_ORIGIN: publicUrlSetting().optional().meta({
    description: "The local server's own origin (`http://HOST:PORT`), which host URLs derive from without `PUBLIC_URL`; absent in the cloud",
    setBy: 'local',
  }),
  // The cloud on its distribution's own name has no wildcard, so its sites share one origin:
  // docs/ARCHITECTURE.md, Websites.
  SITE_ALIAS_ORIGINS: z.stringbool().default(false).meta({
    description:
      "`true`: each user's site has an origin of its own, `{alias}.` before `SITE_URL`'s host (its name has a wildcard); `false`: sites are paths of `SITE_URL`'s one origin. Read with `SITE_URL` set; without it the local platform gives sites their own origins whenever `HOST` is reached as `localhost`",
    deployOption: 'siteDomain',
  }),
  PLATFORM_VERSION: z
    .string()
    .min(1)
    .default('0.1.0')
    .meta({ description: 'The version `GET /health`, discovery and the OpenAPI document report: the package version in the cloud', setBy: 'stack' }),
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'])
    .default('info')
    .describe('`debug`, `info`, `warn`, `error` or `silent`; secrets are always redacted. The stack sets `info`'),
  COGNITO_USER_POOL_ID: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The Cognito user pool and app client whose ID tokens sign users in (cloud)', setBy: 'stack' }),
  COGNITO_CLIENT_ID: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The Cognito user pool and app client whose ID tokens sign users in (cloud)', setBy: 'stack' }),
  RUNTIME_FUNCTION_NAME: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The tenant-isolated Lambda function that runs Python user code (cloud)', setBy: 'stack' }),
  MCP_RUNTIME_FUNCTION_NAME: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "The tenant-isolated Lambda function that runs users' Node MCP servers (cloud)", setBy: 'stack' }),
  RUN_TOKEN_SECRET_ARN: z.string().min(1).optional().meta({
    description: 'The Secrets Manager secret keying the HMAC of run tokens, the short-lived credentials runs call the platform with (cloud)',
    setBy: 'stack',
  }),
  // Its own area's queues only: a function cannot send work to another area's consumers.
  TASK_QUEUES: z.string().min(1).optional().meta({
    description: 'The SQS queues of the queue entry points a function may send to: a JSON object of entry-point id to queue URL (cloud)',
    setBy: 'stack',
  }),
  TASK_DEAD_LETTER_QUEUES: z.string().min(1).optional().meta({
    description: "The dead-letter queues of a queue consumer's entry points, JSON like `TASK_QUEUES`: where it sets aside tasks it cannot read (cloud)",
    setBy: 'stack',
  }),
  SCHEDULE_GROUP: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The EventBridge Scheduler group run-time schedules (cron jobs) live in (cloud)', setBy: 'stack' }),
  SCHEDULER_ROLE_ARN: z.string().min(1).optional().meta({
    description: "The role Scheduler assumes to deliver a schedule's due time; it may only send to the schedule target queues (cloud)",
    setBy: 'stack',
  }),
  SCHEDULE_TARGETS: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The queues run-time schedules may target: a JSON object of queue entry-point id to queue ARN (cloud)', setBy: 'stack' }),
  KEYS_KMS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The KMS key wrapping the data keys of stored third-party keys (cloud; locally `DATA_DIR/master.key` does)', setBy: 'stack' }),
  MONTHLY_FREE_CREDITS: z.coerce
    .number()
    .min(0)
    .max(1_000_000)
    .default(0)
    .describe("Credits added once per calendar month (UTC) per account, on the account's first activity in it (0: off)"),
  USAGE_LOG_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(30)
    .meta({ description: 'How long usage records are kept, in days', deployOption: 'usageLogRetentionDays' }),
  // Admission (functions/core/admission.ts): per process, so it binds in the local platform and a
  // service task; a Lambda instance runs one request at a time (docs/decisions/0038-per-tenant-admission.md).
  TENANT_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(16)
    .describe(
      'Requests one caller (an account, and each credential it presents) may have in progress at once in one platform process; one more waits up to `ADMISSION_WAIT_MS` for a slot, then gets 429 `CONCURRENCY_LIMITED` with `Retry-After`. Health and discovery are never counted (0: no limit)',
    ),
  ANONYMOUS_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(16)
    .describe(
      'Requests without a credential that one client address may have in progress at once in one platform process, per channel or site on public routes; past it, as `TENANT_CONCURRENCY` (0: no limit)',
    ),
  ADMISSION_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(25)
    .describe(
      "Longest a request over its caller's share waits for a slot before its 429; as many may wait as the share allows in progress, and one more is refused at once (0: refuse at once)",
    ),
  AGENT_MODEL_HOSTS: hostListSetting.default([...DEFAULT_AGENT_MODEL_HOSTS]).meta({
    description:
      'The model endpoints agents and voice agents may reach besides the platform, comma separated, same syntax as `MCP_EGRESS_ALLOW_HOSTS`; a server on loopback or a private address (Ollama, vLLM, llama.cpp) only as `host:port`, e.g. `127.0.0.1:11434`; empty for none. The start refuses an entry it could never match, naming it',
    deployOption: 'agentModelHosts',
  }),
});

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * The settings one area module declares, as parsed. Without the index signature zod gives an
 * object of no settings, which would let `config.ANY_NAME` type-check for every listed area.
 */
type SettingsOf<A> = A extends { readonly settings: infer S extends z.ZodRawShape } ? DeclaredKeys<z.infer<z.ZodObject<S>>> : never;
type DeclaredKeys<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** The kernel's settings and those of every listed area (lib/manifest/areas.ts, through functions/core/area-list.ts). */
export type Config = Readonly<z.infer<typeof kernelSchema> & UnionToIntersection<SettingsOf<ListedArea>>>;

export class ConfigError extends Error {}

/** Names of the kernel's settings, which no area may declare again. */
export const KERNEL_SETTINGS: ReadonlySet<string> = new Set(Object.keys(kernelSchema.shape));

/**
 * Validates configuration once, at start: the kernel's settings and those `modules` declare (the
 * whole list locally; a cloud function's own list, since it receives only its areas' variables, and
 * importing the whole list would bundle every area). Fails with one message naming every bad
 * variable, so a misconfigured function or local start stops immediately instead of failing on
 * some later request.
 */
export function parseConfig(env: Record<string, string | undefined>, modules: readonly { readonly settings: z.ZodRawShape }[]): Config {
  const schema = kernelSchema.extend(Object.assign({}, ...modules.map((area) => area.settings)) as z.ZodRawShape);
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid platform configuration: ${problems}`);
  }
  return Object.freeze(result.data) as Config;
}
