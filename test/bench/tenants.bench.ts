/**
 * Many tenants at once (issue 33): the same trivial action, echo chat and MCP `tools/call` at 8
 * concurrent callers, spread round-robin over 1, 10, 50 and 200 tenants (each with its own account,
 * action, agent and MCP server, so its own Python runtime and MCP host). Each row is next to the
 * 1-tenant row of its kind from the same run: what it shows is what tenants cost, not the call.
 * `BENCH_TENANTS=1,10,50` runs fewer levels (the 200-tenant level starts 200 runtimes and 200 hosts).
 */
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';
import { TRIVIAL_HANDLER } from './trivial-action.ts';

const CONCURRENCY = 8;
/**
 * Calls per row: at least this many, and at least two per tenant. Chats stay under the chat route's
 * 60 a minute per caller for the 1-tenant row (each round starts in a fresh rate-limit window).
 */
const MIN_CALLS: Record<'action' | 'chat' | 'mcp', number> = { action: 160, chat: 56, mcp: 160 };
const RATE_WINDOW_MS = 60_000;
/** Tenants created at once while setting up (each create of an MCP server starts its host). */
const SETUP_PARALLEL = 4;
const LEVELS = (process.env['BENCH_TENANTS'] ?? '1,10,50,200')
  .split(',')
  .map((level) => Number(level.trim()))
  .filter((level) => Number.isInteger(level) && level > 0);

const ECHO_AGENT = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');
const MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  return server;
};
`;
const MCP_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } });

interface Tenant {
  readonly token: string;
  readonly actionId: string;
  readonly agentId: string;
  readonly serverId: string;
}

type Kind = 'action' | 'chat' | 'mcp';
const KINDS: readonly Kind[] = ['action', 'chat', 'mcp'];
const KIND_NAMES: Record<Kind, string> = {
  action: 'trivial action',
  chat: 'echo chat, new conversation',
  mcp: 'MCP tools/call',
};

/** The row of `kind` over `tenants` tenants, as targets.ts names it. */
export function tenantRowName(kind: Kind, tenants: number): string {
  return `${KIND_NAMES[kind]} (c=${CONCURRENCY}), ${tenants} tenant${tenants === 1 ? '' : 's'}`;
}

async function createTenant(platform: TestPlatform, n: number): Promise<Tenant> {
  const user = await createUser(platform, { alias: `tenants${n}`, credits: 1_000_000 });
  const ok = (what: string, reply: { status: number; text: string; body: any }) => {
    if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
    return reply.body.data as Record<string, string>;
  };
  const token = user.token;
  const [action, agent, server] = await Promise.all([
    platform.api('POST', '/action/create', {
      token,
      body: { actionName: `Tenants ${n}`, description: 'echo', runtime: 'python3.12', sourceCode: TRIVIAL_HANDLER, category: 'bench', status: 'active' },
    }),
    platform.api('POST', '/agent/create', { token, body: { agentName: `tenants-${n}`, description: 'echo', sourceCode: ECHO_AGENT } }),
    platform.api('POST', '/mcp-admin/create', { token, body: { serverName: `tenants-${n}`, description: 'add', sourceCode: MCP_SERVER } }),
  ]);
  return {
    token,
    actionId: ok('creating an action', action).actionId!,
    agentId: ok('creating an agent', agent).agentId!,
    serverId: ok('creating an MCP server', server).serverId!,
  };
}

function send(agent: Agent, url: string, token: string, method: 'GET' | 'POST', body?: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One call of `kind` for `tenant`: its latency, or the refusal it got (a fast error page must not pass for an answer). */
async function call(agent: Agent, url: string, kind: Kind, tenant: Tenant, i: number): Promise<{ ms: number; refused: string | null }> {
  const startedAt = performance.now();
  let reply: { status: number; text: string };
  let needle: string;
  if (kind === 'action') {
    reply = await send(agent, `${url}/action/${tenant.actionId}?x=${i}`, tenant.token, 'GET');
    needle = `"echo":"${i}"`;
  } else if (kind === 'chat') {
    const prompt = `hello ${i}`;
    reply = await send(agent, `${url}/stream/agent/${tenant.agentId}/chat`, tenant.token, 'POST', JSON.stringify({ prompt }));
    needle = `echo: ${prompt}`;
  } else {
    reply = await send(agent, `${url}/mcp/${tenant.serverId}`, tenant.token, 'POST', MCP_CALL, { accept: 'application/json, text/event-stream' });
    needle = '"text":"5"';
  }
  const ms = elapsedSince(startedAt);
  if (reply.status === 200 && reply.text.includes(needle)) return { ms, refused: null };
  // The runtime pool refuses a tenant it has no place for (503); anything else is a broken bench.
  if (reply.status === 503 || reply.status === 429) return { ms, refused: `${reply.status}` };
  throw new Error(`${kind} for a tenant: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
}

/** `count` calls round-robin over `tenants` from `CONCURRENCY` callers in a closed loop. */
async function roundRobin(agent: Agent, url: string, kind: Kind, tenants: readonly Tenant[], count: number) {
  const samples: number[] = [];
  const refusals: string[] = [];
  let issued = 0;
  const caller = async () => {
    while (issued < count) {
      const i = issued++;
      const outcome = await call(agent, url, kind, tenants[i % tenants.length]!, i);
      if (outcome.refused === null) samples.push(outcome.ms);
      else refusals.push(outcome.refused);
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, caller));
  return { samples, refusals, wallMs: elapsedSince(startedAt) };
}

/** Counts the local runtimes' processes stopped to make room, when the ports are the local adapters. */
function evictionCounter(platform: TestPlatform): Record<'python' | 'mcp', number> {
  const counts = { python: 0, mcp: 0 };
  type Exits = { onProcessExit?: (listener: (exit: { reason: string }) => void) => unknown };
  const { compute, mcpRuntime } = platform.running.ports as unknown as { compute: Exits; mcpRuntime: Exits };
  compute.onProcessExit?.((exit) => void (exit.reason === 'evicted' && counts.python++));
  mcpRuntime.onProcessExit?.((exit) => void (exit.reason === 'evicted' && counts.mcp++));
  return counts;
}

export const tenantsBench: BenchModule = {
  name: 'tenants',
  async run({ progress, defer }) {
    progress('tenants: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });
    defer(() => agent.destroy());
    const evicted = evictionCounter(platform);

    const most = Math.max(...LEVELS);
    const tenants: Tenant[] = [];
    for (let start = 0; start < most; start += SETUP_PARALLEL) {
      if (start % 40 === 0) progress(`tenants: creating tenants ${start + 1}-${Math.min(most, start + 40)} of ${most}`);
      const batch = Array.from({ length: Math.min(SETUP_PARALLEL, most - start) }, (_, i) => createTenant(platform, start + i));
      tenants.push(...(await Promise.all(batch)));
    }

    const rows: MeasuredRow[] = [];
    const baselines = new Map<Kind, MeasuredRow>();
    for (const level of [...LEVELS].sort((a, b) => a - b)) {
      const group = tenants.slice(0, level);
      for (const kind of KINDS) {
        const count = Math.max(MIN_CALLS[kind], 2 * level);
        platform.clock.alignToWindow(RATE_WINDOW_MS);
        progress(`tenants: ${kind} over ${level} tenants, warm-up`);
        // Each tenant once first, as the other rows warm up: the first call of a tenant is its start.
        const warmUp = await roundRobin(agent, platform.url, kind, group, level);
        progress(`tenants: ${kind} over ${level} tenants, ${count} calls`);
        platform.clock.alignToWindow(RATE_WINDOW_MS);
        const before = { ...evicted };
        const round = await roundRobin(agent, platform.url, kind, group, count);
        const stopped = kind === 'mcp' ? evicted.mcp - before.mcp : evicted.python - before.python;
        const refusals = round.refusals.length;
        const note = [
          `${count} calls round-robin over ${level} tenant${level === 1 ? '' : 's'}`,
          `${stopped} process${stopped === 1 ? '' : 'es'} stopped to make room`,
          ...(refusals > 0 ? [`${refusals} refused (${[...new Set(round.refusals)].join(', ')}), not in the figures`] : []),
          ...(warmUp.refusals.length > 0 ? [`${warmUp.refusals.length} refused in the warm-up`] : []),
        ].join('; ');
        const row = measured(tenantRowName(kind, level), round.samples, { perSecond: (round.samples.length * 1000) / round.wallMs, note });
        const baseline = baselines.get(kind);
        if (baseline === undefined) {
          if (level === 1) baselines.set(kind, row);
          rows.push(row);
        } else {
          const share = `${((100 * row.perSecond!) / baseline.perSecond!).toFixed(0)}% of 1 tenant's ops/s`;
          rows.push(versus({ ...row, note: `${share}; ${note}` }, baseline));
        }
      }
    }
    return rows;
  },
};
