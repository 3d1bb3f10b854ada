import { isIP, isIPv6 } from 'node:net';
import * as z from 'zod';
import type { areas } from '../../lib/manifest/areas.ts';
import type { AreaModule } from '../../lib/manifest/types.ts';

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

/** The kernel's settings; each area module adds its own (`settings`), checked by the same parse. */
const kernelSchema = z.object({
  STAGE: z.string().min(1).default('local'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  TABLE_PREFIX: z.string().min(1),
  BUCKET_PREFIX: z.string().min(1),
  /** Local stand-ins (dynalite, s3rver); absent in the cloud. */
  DYNAMODB_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  /** What requests to the local stand-ins are signed with: made by the local platform at each start. */
  LOCAL_STORES_ACCESS_KEY_ID: z.string().min(1).optional(),
  LOCAL_STORES_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /**
   * Public host URLs. Absent ones are derived from the request (cloud API Gateway stage URL);
   * locally each derives from PUBLIC_URL, or the local server's own URL, unless set.
   */
  BASE_URL: publicUrlSetting().optional(),
  STREAM_URL: publicUrlSetting().optional(),
  MCP_URL: publicUrlSetting().optional(),
  VOICE_URL: publicUrlSetting(['ws', 'wss', 'http', 'https']).optional(),
  CDN_URL: publicUrlSetting().optional(),
  SITE_URL: publicUrlSetting().optional(),
  CODE_URL: publicUrlSetting().optional(),
  /**
   * Local: where outside services and clients reach this platform (a tunnel's URL, e.g.
   * `https://abc.trycloudflare.com`), the local server's own URL otherwise. Every host URL derives
   * from it as from the local server's (lib/local/platform.ts); it wins over forwarded headers.
   */
  PUBLIC_URL: publicUrlSetting().optional(),
  /**
   * Whether the request's `Forwarded` / `X-Forwarded-Host` / `X-Forwarded-Proto` headers say which
   * URL it was sent to: only behind a proxy that sets them (a tunnel), since a client reaching the
   * platform directly could otherwise choose the URLs it is given and signatures are checked over.
   * Locally, without PUBLIC_URL, host URLs on LOCAL_ORIGIN then follow each request's origin.
   */
  TRUST_FORWARDED_HEADERS: z.stringbool().default(false),
  /** The local server's own origin (`http://HOST:PORT`), set by the local platform at each start; absent in the cloud. */
  LOCAL_ORIGIN: publicUrlSetting().optional(),
  /**
   * Whether each user's site has an origin of its own, `{alias}.` before SITE_URL's host (`true`:
   * locally, and in the cloud with a site domain), or all sites are paths of SITE_URL's one origin
   * (`false`: the cloud on its distribution's own name, which has no wildcard). docs/ARCHITECTURE.md, Websites.
   */
  SITE_ALIAS_ORIGINS: z.stringbool().default(false),
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
  /** The EventBridge Scheduler group run-time schedules (cron jobs) live in (cloud). */
  SCHEDULE_GROUP: z.string().min(1).optional(),
  /** The role Scheduler assumes to deliver a schedule's due time; it may only send to the schedule target queues (cloud). */
  SCHEDULER_ROLE_ARN: z.string().min(1).optional(),
  /** The queues run-time schedules may target (cloud): a JSON object of queue entry-point id to queue ARN. */
  SCHEDULE_TARGETS: z.string().min(1).optional(),
  /** KMS key that wraps the data keys of stored third-party keys (cloud). */
  KEYS_KMS_KEY_ID: z.string().min(1).optional(),
  /** Credits added once per calendar month (UTC) on an account's first activity; 0 turns it off. */
  MONTHLY_FREE_CREDITS: z.coerce.number().min(0).max(1_000_000).default(0),
  USAGE_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * The model endpoints agents and voice agents may reach besides the platform itself, comma
   * separated (`hostListSetting`); a local model server only as `host:port`. Empty: none.
   */
  AGENT_MODEL_HOSTS: hostListSetting.default([...DEFAULT_AGENT_MODEL_HOSTS]),
});

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The settings one area module declares, as parsed. */
type SettingsOf<A> = A extends { readonly settings: infer S extends z.ZodRawShape } ? z.infer<z.ZodObject<S>> : never;

/** The kernel's settings and those of every listed area (lib/manifest/areas.ts). */
export type Config = Readonly<z.infer<typeof kernelSchema> & UnionToIntersection<SettingsOf<(typeof areas)[number]>>>;

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
export function parseConfig(env: Record<string, string | undefined>, modules: readonly AreaModule[]): Config {
  const schema = kernelSchema.extend(Object.assign({}, ...modules.map((area) => area.settings)) as z.ZodRawShape);
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid platform configuration: ${problems}`);
  }
  return Object.freeze(result.data) as Config;
}
