import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface, type Interface } from 'node:readline';
import { callApi } from '../support/local-platform.ts';
import { elapsedSince, repoRoot, type BenchContext, type BenchModule } from './harness.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';

/** Tenants in the mixed load: each gets an action, an agent and an MCP server of its own. */
const TENANTS = 12;
/** Calls per tenant per round, tenants `PARALLEL` at a time. */
const ACTION_RUNS = 5;
const CHATS = 3;
const MCP_CALLS = 5;
const PARALLEL = 4;
/**
 * Longer than one load (so its tenants' processes are all alive when it ends), short enough for the
 * bench to watch the idle stop; the platform's default is 10 minutes.
 */
const IDLE_MS = 30_000;
const DEADLINE_MS = 60_000;
const POLL_MS = 100;

const ACTION = `def handler(event, context):
    return {"statusCode": 200, "body": {"echo": event.get("x")}}
`;
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

/** One process as /proc shows it. */
interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly rssKb: number;
  /** Proportional set size: shared pages split between their sharers (null when unreadable). */
  readonly pssKb: number | null;
  readonly cmdline: string;
}

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    let pssKb: number | null = null;
    try {
      pssKb = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? Number.NaN);
    } catch {
      // another user's process without the right to read it
    }
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    return { pid, ppid, rssKb, pssKb, cmdline };
  } catch {
    return null; // gone while we looked
  }
}

type Kind = 'stores' | 'python' | 'mcp' | 'other';

/** What one process subtree under the platform is, by the commands in it. */
function kindOf(tree: readonly ProcInfo[]): Kind {
  const text = tree.map((p) => p.cmdline).join('\n');
  if (text.includes('stores-process')) return 'stores';
  if (text.includes('platform_runtime.server')) return 'python';
  if (text.includes('host.mjs')) return 'mcp';
  return 'other';
}

interface Group {
  /** Subtrees (sandboxes, the stores' process) of this kind. */
  count: number;
  processes: number;
  rssKb: number;
  pssKb: number;
}

interface Snapshot {
  readonly platformRssKb: number;
  readonly groups: Record<Kind, Group>;
  readonly heap: { readonly before: NodeJS.MemoryUsage; readonly after: NodeJS.MemoryUsage };
}

/** The platform process and every process under it, grouped by the direct child they descend from. */
function processTree(platformPid: number): { platform: ProcInfo; groups: Record<Kind, Group> } {
  const all = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => readProc(Number(entry)))
    .filter((p): p is ProcInfo => p !== null);
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const subtree = (root: ProcInfo): ProcInfo[] => [root, ...(children.get(root.pid) ?? []).flatMap(subtree)];
  const platform = all.find((p) => p.pid === platformPid);
  if (platform === undefined) throw new Error('the platform process is gone');
  const empty = (): Group => ({ count: 0, processes: 0, rssKb: 0, pssKb: 0 });
  const groups: Record<Kind, Group> = { stores: empty(), python: empty(), mcp: empty(), other: empty() };
  for (const child of children.get(platformPid) ?? []) {
    const tree = subtree(child);
    const group = groups[kindOf(tree)];
    group.count++;
    group.processes += tree.length;
    group.rssKb += tree.reduce((sum, p) => sum + p.rssKb, 0);
    group.pssKb += tree.reduce((sum, p) => sum + (p.pssKb ?? p.rssKb), 0);
  }
  return { platform, groups };
}

/** The platform in a child process (platform-child.ts), spoken to over its stdin and stdout. */
interface PlatformChild {
  readonly url: string;
  readonly pid: number;
  snapshot(): Promise<Snapshot>;
  stop(): Promise<void>;
}

async function startPlatformChild(dataDir: string): Promise<PlatformChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--expose-gc', '--import', 'tsx', 'test/bench/platform-child.ts', JSON.stringify({ dataDir, runtimeIdleTimeoutMs: IDLE_MS })],
    { cwd: repoRoot, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: Interface = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      void exited.then(() => reject(new Error('the platform child exited')));
    });
  const ready = JSON.parse(await next()) as { url: string; pid: number };
  return {
    ...ready,
    async snapshot() {
      const { platform, groups } = processTree(ready.pid);
      child.stdin!.write('memory\n');
      const heap = JSON.parse(await next()) as Snapshot['heap'];
      return { platformRssKb: platform.rssKb, groups, heap };
    },
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls the process tree until `done` holds; the bench fails rather than wait forever. */
async function until(platformPid: number, what: string, done: (groups: Record<Kind, Group>) => boolean): Promise<void> {
  for (const deadline = Date.now() + DEADLINE_MS; ;) {
    if (done(processTree(platformPid).groups)) return;
    if (Date.now() > deadline) throw new Error(`memory: ${what} did not happen within ${DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

interface Tenant {
  readonly token: string;
  readonly actionId: string;
  readonly agentId: string;
  readonly serverId: string;
}

async function createTenant(url: string, adminToken: string, n: number): Promise<Tenant> {
  const ok = <T>(what: string, reply: { status: number; text: string; body: T }, status = 200): T => {
    if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
    return reply.body;
  };
  const user = ok('creating a user', await callApi(url, 'POST', '/admin/users', { token: adminToken, body: { alias: `mem${n}`, credits: 1_000_000 } }), 201)
    .data as { token: string };
  const token = user.token;
  const action = ok(
    'creating an action',
    await callApi(url, 'POST', '/action/create', {
      token,
      body: { actionName: `Mem ${n}`, description: 'echo', runtime: 'python3.12', sourceCode: ACTION, category: 'bench', status: 'active' },
    }),
  );
  const agent = ok(
    'creating an agent',
    await callApi(url, 'POST', '/agent/create', { token, body: { agentName: `mem-${n}`, description: 'echo', sourceCode: ECHO_AGENT } }),
  );
  const server = ok(
    'creating an MCP server',
    await callApi(url, 'POST', '/mcp-admin/create', { token, body: { serverName: `mem-${n}`, description: 'add', sourceCode: MCP_SERVER } }),
  );
  return { token, actionId: action.data.actionId, agentId: agent.data.agentId, serverId: server.data.serverId };
}

function send(
  agent: Agent,
  url: string,
  token: string,
  method: 'GET' | 'POST',
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
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

/** One tenant's share of a round: action runs, chats, MCP tool calls; every answer is checked. */
async function tenantRound(agent: Agent, url: string, tenant: Tenant, round: number): Promise<void> {
  const expect = (what: string, reply: { status: number; text: string }, needle: string) => {
    if (reply.status !== 200 || !reply.text.includes(needle)) throw new Error(`${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
  };
  for (let i = 0; i < ACTION_RUNS; i++)
    expect('action run', await send(agent, `${url}/action/${tenant.actionId}?x=${i}`, tenant.token, 'GET'), `"echo":"${i}"`);
  for (let i = 0; i < CHATS; i++) {
    const prompt = `hello ${round} ${i}`;
    expect('chat', await send(agent, `${url}/stream/agent/${tenant.agentId}/chat`, tenant.token, 'POST', JSON.stringify({ prompt })), `echo: ${prompt}`);
  }
  for (let i = 0; i < MCP_CALLS; i++) {
    expect(
      'tools/call',
      await send(agent, `${url}/mcp/${tenant.serverId}`, tenant.token, 'POST', MCP_CALL, { accept: 'application/json, text/event-stream' }),
      '"text":"5"',
    );
  }
}

async function mixedLoad(agent: Agent, url: string, tenants: readonly Tenant[], round: number): Promise<void> {
  for (let start = 0; start < tenants.length; start += PARALLEL) {
    await Promise.all(tenants.slice(start, start + PARALLEL).map((tenant) => tenantRound(agent, url, tenant, round)));
  }
}

const MB = (kb: number) => kb / 1024;
const heapNote = (s: Snapshot) => {
  const m = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  const { before, after } = s.heap;
  return `V8 heap used ${m(before.heapUsed)} MB (${m(after.heapUsed)} after a full GC) of ${m(before.heapTotal)} total, external ${m(before.external)} (buffers ${m(before.arrayBuffers)})`;
};
const groupNote = (g: Group, what: string) =>
  `${g.count} ${what}, ${g.processes} processes; RSS summed ${MB(g.rssKb).toFixed(0)} MB counts shared pages once per process`;

/**
 * Memory of the local platform and of what it starts, measured from outside with /proc: the
 * platform process (RSS, and its V8 heap as it reports it), the stores' process, the Python
 * runtime sandboxes and the MCP host sandboxes (PSS: shared pages split between sharers, so forked
 * children are not counted twice). Snapshots: idle after start (with its spare runtime), after a
 * mixed load over many tenants (actions, chats, MCP calls), after a second identical load (growth
 * here would be a leak, not warm-up), and after the idle stop.
 */
export const memoryBench: BenchModule = {
  name: 'memory',
  async run(context: BenchContext): Promise<MeasuredRow[]> {
    context.progress('memory: starting the platform in a child process');
    const dataDir = await context.tempDir('memory');
    const platform = await startPlatformChild(dataDir);
    context.defer(() => platform.stop());
    const adminToken = readFileSync(`${dataDir}/admin-token`, 'utf8').trim();
    const agent = new Agent({ keepAlive: true, maxSockets: PARALLEL * 2 });
    context.defer(() => agent.destroy());

    await until(platform.pid, 'the spare runtime start', (groups) => groups.python.count >= 1);
    const idle = await platform.snapshot();

    // Each load brings tenants the platform has not seen: state kept per tenant would grow here.
    const load = async (round: number) => {
      const startedAt = performance.now();
      const tenants: Tenant[] = [];
      for (let n = 0; n < TENANTS; n++) tenants.push(await createTenant(platform.url, adminToken, round * TENANTS + n));
      await mixedLoad(agent, platform.url, tenants, round);
      context.progress(`memory: load ${round} over ${TENANTS} new tenants took ${(elapsedSince(startedAt) / 1000).toFixed(1)} s`);
      return platform.snapshot();
    };
    const loaded = await load(1);
    const again = await load(2);

    context.progress(`memory: waiting for the idle stop (${IDLE_MS} ms)`);
    // What is left: the spare. The checker, last used at the creates, stopped before the tenants.
    await until(platform.pid, 'the idle stop', (groups) => groups.mcp.count === 0 && groups.python.count <= 1);
    const stopped = await platform.snapshot();

    const row = (name: string, kb: number, note: string) => measured(name, [MB(kb)], { unit: 'MB', note });
    const platformIdle = row('platform RSS, idle after start', idle.platformRssKb, heapNote(idle));
    const pss = (s: Snapshot, kind: Kind) => s.groups[kind].pssKb;
    const runtimesIdle = row('Python runtimes PSS, idle', pss(idle, 'python'), groupNote(idle.groups.python, 'sandbox (the spare)'));
    const storesIdle = row('stores process PSS, idle', pss(idle, 'stores'), groupNote(idle.groups.stores, 'process'));
    return [
      platformIdle,
      versus(row('platform RSS, after mixed load', loaded.platformRssKb, heapNote(loaded)), platformIdle),
      versus(row('platform RSS, after a second load', again.platformRssKb, `new tenants; ${heapNote(again)}`), platformIdle),
      versus(row('platform RSS, after idle stop', stopped.platformRssKb, heapNote(stopped)), platformIdle),
      storesIdle,
      versus(row('stores process PSS, after mixed load', pss(loaded, 'stores'), 'dynalite (LevelDB) and s3rver'), storesIdle),
      versus(row('stores process PSS, after a second load', pss(again, 'stores'), 'dynalite (LevelDB) and s3rver'), storesIdle),
      runtimesIdle,
      versus(
        row('Python runtimes PSS, after mixed load', pss(loaded, 'python'), groupNote(loaded.groups.python, 'sandboxes (tenants, checker, spare)')),
        runtimesIdle,
      ),
      row('Python runtimes PSS, after idle stop', pss(stopped, 'python'), groupNote(stopped.groups.python, 'sandbox (the spare)')),
      row('MCP hosts PSS, after mixed load', pss(loaded, 'mcp'), groupNote(loaded.groups.mcp, 'sandboxes')),
      row('MCP hosts PSS, after idle stop', pss(stopped, 'mcp'), groupNote(stopped.groups.mcp, 'sandboxes')),
    ];
  },
};
