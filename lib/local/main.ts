import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { ConfigError, hostListSetting } from '../../functions/core/config.ts';
import { siteUrlTemplate } from '../../functions/core/http/public-urls.ts';
import { DEFAULT_SANDBOX_NICE, DEFAULT_UID_RANGE, parseUidRange } from '../../functions/runtimes/os-sandbox.ts';
import { keepRunningOnUncaughtErrors } from './last-resort.ts';
import { ADMIN_TOKEN_FILE, startLocalPlatform, StartupError, type LocalPlatformOptions } from './platform.ts';
import { prettyLogWriter } from './pretty-log.ts';
import { readFile } from 'node:fs/promises';

/**
 * The settings `npm start` reads from its environment, beside the platform's own (core/config.ts,
 * which the local platform also reads from it). Each carries its meaning for the configuration
 * reference (docs/configuration.md, core/setting-meta.ts).
 */
export const localSettings = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787).describe('HTTP port (`0` picks a free one)'),
  SITE_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta({ description: "Port users' sites are served on, another origin than the API (`0` picks a free one)", whenUnset: '`PORT + 1`' }),
  HOST: z.string().min(1).default('127.0.0.1').describe('Interface to listen on'),
  DATA_DIR: z.string().min(1).default('.data').describe('Tables, files, the admin token and `master.key`; one running platform per directory'),
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'])
    .default('info')
    .describe('`debug`, `info`, `warn`, `error` or `silent`; secrets are always redacted'),
  LOG_FORMAT: z
    .enum(['json', 'pretty'])
    .optional()
    .describe('Logs are one compact line per event at a terminal and JSON lines otherwise (when output is piped); `json` forces JSON'),
  UNSAFE_USER_CODE: z
    .enum(['allow'], { error: "must be 'allow' or unset" })
    .optional()
    .describe('`allow` runs user code **without** the OS sandbox (logged as an error at every start); only for your own code on a machine without bubblewrap'),
  SANDBOX_UID_RANGE: z
    .string()
    .transform((text, context) => {
      const range = parseUidRange(text);
      if (typeof range !== 'string') return range;
      context.addIssue({ code: 'custom', message: range });
      return z.NEVER;
    })
    .optional()
    .meta({
      description:
        'The uids (and gids of the same numbers) user code runs as when the platform runs as root: one per tenant, `FIRST-LAST`. They must own nothing on the machine; the platform refuses a range that holds a user or group of /etc/passwd, /etc/group or a range of /etc/subuid, /etc/subgid. Two platforms on one machine need ranges that do not overlap',
      whenUnset: `\`${DEFAULT_UID_RANGE.first}-${DEFAULT_UID_RANGE.last}\``,
    }),
  // One shared uid let one tenant's threads starve every other tenant: refused rather than ignored.
  SANDBOX_UID: z
    .undefined({ error: 'replaced by SANDBOX_UID_RANGE: sandboxes run as a uid per tenant from that range' })
    .optional()
    .describe('No longer read: the start refuses it; sandboxes run as a uid (and gid) per tenant from `SANDBOX_UID_RANGE`'),
  SANDBOX_GID: z
    .undefined({ error: 'replaced by SANDBOX_UID_RANGE (each uid is also the gid)' })
    .optional()
    .describe('No longer read: the start refuses it; sandboxes run as a uid (and gid) per tenant from `SANDBOX_UID_RANGE`'),
  SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(64).max(1_000_000).optional().meta({
    description: "Processes and threads one tenant's sandboxes may have at once (RLIMIT_NPROC of the tenant's uid; only as root)",
    whenUnset: '`1024`',
  }),
  SANDBOX_NICE: z.coerce
    .number()
    .int()
    .min(0)
    .max(19)
    .optional()
    .meta({
      description:
        "How far below the platform's CPU priority tenants' code runs, in nice steps (nice 10 for a platform at 0), so that user code keeping the cores busy does not delay the platform's own answers (health, refusals, other tenants' requests); user code cannot raise it back (docs/isolation.md). 0: the platform's priority",
      whenUnset: `\`${DEFAULT_SANDBOX_NICE}\``,
    }),
  PYTHON: z.string().min(1).optional().meta({
    description:
      'The interpreter agents and actions run on (3.11 or 3.12), a path or a name on `PATH`; the start log names it and its version (README, Quick start)',
    whenUnset: '`.venv/bin/python` if it exists, else `python3`',
  }),
  RUNTIME_SPARES: z.coerce.number().int().min(0).max(32).optional().meta({
    description:
      "Python runtimes kept started for tenants that have none yet, so a tenant's first run does not wait for an interpreter start (0: none; each costs one runtime's memory while it waits)",
    whenUnset: '`1`',
  }),
  VOICE_SPARES: z.coerce.number().int().min(0).max(32).optional().meta({
    description:
      "Voice session processes kept started, with the voice framework imported, for the next calls, so a call is ready in about 0.1 s instead of an interpreter start and Strands' imports (0: each call starts its own; each costs one Python process's memory while it waits, about 90 MB with Strands)",
    whenUnset: '`1`',
  }),
  // With the idle stop, what bounds the tenants' processes' memory (the sizing below the table).
  RUNTIME_MAX_PROCESSES: z.coerce.number().int().min(1).max(1024).optional().meta({
    description:
      'Most Python runtimes (spares included) and most MCP hosts alive at once, each. A new tenant beyond it takes the place of the least recently used one idle for 10 s or more; when every one was used more recently it waits up to 2 s, then is answered 503, so tenants in use are never stopped for it',
    whenUnset:
      "what fits in half of the machine's memory at an idle process's resident set (72 MB a Python runtime, 80 MB an MCP host), from 8 to 256 (167 and 150 on a 24 GB machine)",
  }),
  RUNTIME_IDLE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .optional()
    .meta({ description: "A tenant's runtime or MCP host without calls for this long, in seconds, is stopped", whenUnset: '`600`' }),
  MCP_EGRESS_ALLOW_HOSTS: hostListSetting.optional().meta({
    description:
      "What MCP servers' `fetch` may reach, comma separated: `*` (any host with public addresses, ports 443 and 80), `*.example.com`, `host`, `host:port`; empty for nothing",
    whenUnset: '`*`',
  }),
  // Read by bin/start.mjs before this runs (and by bin/build-local.ts); here for the reference, so
  // it accepts whatever those accept.
  LOCAL_BUILD_DIR: z.string().optional().meta({
    description: "Where `npm start` keeps its build; inside the project, so the build's packages resolve from `node_modules`",
    whenUnset: '`.tmp/local-build`',
  }),
});

/**
 * The interpreter `npm run setup:python` makes (bin/setup-python.mjs), relative to the checkout
 * npm runs scripts in. Preferred when PYTHON is unset, so that setting up and starting needs no
 * variable; the start's preflight line names whichever interpreter was taken.
 */
const SETUP_VENV_PYTHON = resolve('.venv', 'bin', 'python');

/** What the built start (lib/local/build.ts) brings: handler modules from its bundle, the stores' process prebuilt. */
export type BuiltParts = Pick<LocalPlatformOptions, 'importHandlerModule' | 'storesProcess'>;

/**
 * The main of the local platform: settings from the environment, start, the "ready" lines, and a
 * clean stop on SIGINT/SIGTERM. `bin/local.ts` runs it from the TypeScript sources (tsx); `npm
 * start` runs it from the build, passing `built`.
 */
export async function runLocalPlatform(built: BuiltParts = {}): Promise<void> {
  const env = localSettings.safeParse(process.env);

  if (!env.success) {
    console.error(`Invalid environment: ${env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    process.exit(1);
  }

  // The SDK checks this when a client is built, i.e. after these imports. Versions are pinned in the
  // lock file, so its notice that future releases need Node 22 is not actionable at every start.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

  try {
    const running = await startLocalPlatform({
      ...built,
      port: env.data.PORT,
      ...(env.data.SITE_PORT !== undefined ? { sitePort: env.data.SITE_PORT } : {}),
      host: env.data.HOST,
      dataDir: env.data.DATA_DIR,
      logLevel: env.data.LOG_LEVEL,
      ...(env.data.MCP_EGRESS_ALLOW_HOSTS ? { mcpEgressAllowHosts: env.data.MCP_EGRESS_ALLOW_HOSTS } : {}),
      python: env.data.PYTHON ?? (existsSync(SETUP_VENV_PYTHON) ? SETUP_VENV_PYTHON : 'python3'),
      ...(env.data.RUNTIME_SPARES !== undefined ? { runtimeSpares: env.data.RUNTIME_SPARES } : {}),
      ...(env.data.VOICE_SPARES !== undefined ? { voiceSpares: env.data.VOICE_SPARES } : {}),
      ...(env.data.RUNTIME_MAX_PROCESSES !== undefined ? { runtimeMaxProcesses: env.data.RUNTIME_MAX_PROCESSES } : {}),
      ...(env.data.RUNTIME_IDLE_SECONDS !== undefined ? { runtimeIdleTimeoutMs: env.data.RUNTIME_IDLE_SECONDS * 1000 } : {}),
      sandbox: {
        ...(env.data.UNSAFE_USER_CODE ? { unsafeUserCode: env.data.UNSAFE_USER_CODE } : {}),
        ...(env.data.SANDBOX_UID_RANGE !== undefined ? { uidRange: env.data.SANDBOX_UID_RANGE } : {}),
        ...(env.data.SANDBOX_MAX_PROCESSES !== undefined ? { maxProcesses: env.data.SANDBOX_MAX_PROCESSES } : {}),
        ...(env.data.SANDBOX_NICE !== undefined ? { nice: env.data.SANDBOX_NICE } : {}),
      },
      ...(process.stdout.isTTY && env.data.LOG_FORMAT !== 'json' ? { logWriter: prettyLogWriter() } : {}),
    });
    keepRunningOnUncaughtErrors(running.ports.log);
    const tokenFile = join(running.dataDir, ADMIN_TOKEN_FILE);
    const token = running.createdAdminToken ?? (await readFile(tokenFile, 'utf8').catch(() => '')).trim();
    // performance.now() counts from process start, so the figure includes module loading.
    console.log(`Platform ready at ${running.url} in ${Math.round(performance.now())} ms (data in ${running.dataDir})`);
    if (running.siteUrl !== null) console.log(`Users' sites are served at ${siteUrlTemplate(running.siteUrl, running.ports.config.SITE_ALIAS_ORIGINS)}`);
    if (running.createdAdminToken) console.log(`Created the admin account; its token is in ${tokenFile} (mode 600).`);
    if (token) console.log(`Try it:\n  curl -H "Authorization: Bearer $(cat ${tokenFile})" ${running.url}/user/info`);

    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`${signal}: finishing in-flight requests and closing the stores...`);
      running.close().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`Shutdown failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  } catch (error) {
    // A setting the platform's configuration refuses (e.g. AGENT_MODEL_HOSTS) is the user's to fix: one line.
    if (error instanceof StartupError || error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
