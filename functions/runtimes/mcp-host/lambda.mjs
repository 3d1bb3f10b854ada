// @ts-check
/**
 * Lambda entry of the MCP host (handler `lambda.handler`), invoked synchronously by
 * ../../adapters/mcp-runtime/aws.ts in tenant-isolation mode (`TenantId` = the server's owner), so an
 * execution environment only ever runs one owner's servers, like a local host process.
 *
 * Event: `{op: 'inspect', serverId, version, sourceCode, timeoutMs?}` -> `{ok, tools}` or
 * `{ok: false, error}`; `{op: 'handle', serverId, version, sourceCode, request: {method, headers,
 * body}, env, timeoutMs?}` -> `{status, headers, body}`. Same handling as the local host (core.mjs).
 *
 * Deployment notes (the function's configuration):
 * - `NODE_OPTIONS=--experimental-vm-modules` is required for ES module sources (CommonJS sources
 *   work without it); add `--disable-warning=ExperimentalWarning` to keep the logs quiet.
 * - `@modelcontextprotocol/sdk` and `zod` resolve from this file's location upwards and from
 *   NODE_PATH, i.e. the function's own node_modules or a layer's `/opt/nodejs/node_modules`
 *   (layers/mcp-node). `MCP_MODULES_FROM` overrides the directory.
 * - The role needs no permissions: user code is what runs here. The role's temporary credentials
 *   are removed from `process.env` before any user code loads; Node's permission model
 *   (`--experimental-permission --allow-fs-read=/var/task --allow-fs-read=/opt --allow-fs-read=/var/runtime`
 *   in NODE_OPTIONS) would also keep `/proc/self/environ` out of reach; it is defence in depth, the
 *   per-tenant execution environment is the boundary.
 */
import { createHost } from './core.mjs';

/** Variables that would hand user code the function role's credentials. */
const CREDENTIAL_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_SECURITY_TOKEN',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
];
for (const name of CREDENTIAL_VARIABLES) delete process.env[name];

/** Time kept back from Lambda's own deadline, so the host answers 504 before Lambda kills it. */
const DEADLINE_MARGIN_MS = 1000;

const host = createHost({
  modulesFrom: process.env.MCP_MODULES_FROM ?? import.meta.url,
  maxModules: Number(process.env.MCP_MAX_MODULES) || undefined,
  defaultTimeoutMs: Number(process.env.MCP_REQUEST_TIMEOUT_MS) || undefined,
  log: (message, fields) => console.error(JSON.stringify({ event: 'host', message, ...fields })),
});

/**
 * @param {any} event
 * @param {{ getRemainingTimeInMillis?: () => number }} [context]
 */
export async function handler(event, context) {
  const remaining = context?.getRemainingTimeInMillis?.();
  const limit = typeof remaining === 'number' ? Math.max(1, remaining - DEADLINE_MARGIN_MS) : undefined;
  const requested = typeof event?.timeoutMs === 'number' ? event.timeoutMs : undefined;
  const timeoutMs = limit === undefined ? requested : Math.min(requested ?? limit, limit);
  switch (event?.op) {
    case 'inspect':
      return host.inspect({ ...event, timeoutMs });
    case 'handle':
      return host.handle({ ...event, timeoutMs });
    default:
      throw new Error(`unknown op ${JSON.stringify(event?.op)}: expected 'inspect' or 'handle'`);
  }
}
