/**
 * Attacks from a security review, replayed against `npm start` as an attacker would: one platform,
 * two users, hostile user code. Each tried to leave the tenant's sandbox; each must fail at the OS
 * boundary (os-sandbox.ts) whatever the language-level layers let through.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { descendantProcesses } from '../support/processes.ts';
import { voiceAgentSource } from '../support/voice-agents.ts';

const ACCEPT = { accept: 'application/json, text/event-stream' };

/**
 * An MCP server whose one tool tries every way out it is told about and reports what happened.
 * `this.constructor.constructor('return process')()` is the reported route around the host's
 * per-request `process` view: it works, and must not matter.
 */
const ESCAPING_MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

function realProcess() {
  try { return (function () { return this.constructor.constructor('return process')(); }).call({}); } catch (e) { return process; }
}

async function attempt(work) {
  try { return { ok: true, value: String(await work()).slice(0, 200) }; } catch (e) { return { ok: false, error: String(e && e.code || e && e.message || e).slice(0, 200) }; }
}

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'escape', version: '1.0.0' });
  server.registerTool('escape', { description: 'tries to leave', inputSchema: { platformPid: z.number(), platformPort: z.number(), dataDir: z.string() } }, async ({ platformPid, platformPort, dataDir }) => {
    const proc = realProcess();
    const results = {
      ppid: proc.ppid,
      stopParent: await attempt(() => proc.kill(proc.ppid, 'SIGSTOP')),
      stopPlatform: await attempt(() => proc.kill(platformPid, 'SIGSTOP')),
      fetchPlatform: await attempt(async () => (await fetch('http://127.0.0.1:' + platformPort + '/health')).status),
      connectPlatform: await attempt(() => new Promise((resolve, reject) => {
        const net = proc.getBuiltinModule ? proc.getBuiltinModule('net') : require('net');
        const socket = net.connect(platformPort, '127.0.0.1');
        socket.once('connect', () => { socket.destroy(); resolve('connected'); });
        socket.once('error', reject);
      })),
      readAdminToken: await attempt(() => {
        const fs = proc.getBuiltinModule ? proc.getBuiltinModule('fs') : require('fs');
        return fs.readFileSync(dataDir + '/admin-token', 'utf8');
      }),
      listProcesses: await attempt(() => {
        const fs = proc.getBuiltinModule ? proc.getBuiltinModule('fs') : require('fs');
        return fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name)).join(',');
      }),
    };
    if (results.stopParent.ok) proc.kill(proc.ppid, 'SIGCONT');
    return { content: [{ type: 'text', text: JSON.stringify(results) }] };
  });
  return server;
};
`;

interface AttemptResult {
  ok: boolean;
  value?: string;
  error?: string;
}

/** The platform process's state letter from /proc (T: stopped). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
}

/** An MCP server whose tool fetches a URL it is given, through whatever `fetch` the host provides. */
const FETCHING_MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'fetcher', version: '1.0.0' });
  server.registerTool('get', { description: 'fetches', inputSchema: { url: z.string() } }, async ({ url }) => {
    try {
      const response = await fetch(url);
      return { content: [{ type: 'text', text: 'status ' + response.status + ': ' + (await response.text()) }] };
    } catch (e) {
      return { content: [{ type: 'text', text: 'failed: ' + String(e && e.cause && e.cause.message || e && e.message || e) }] };
    }
  });
  return server;
};
`;

describe('isolation: hostile MCP server code stays inside its sandbox', () => {
  let platform: TestPlatform;
  let attacker: { token: string };
  let outside: http.Server;
  let outsidePort: number;

  beforeAll(async () => {
    // Prepare: a service the operator lets MCP servers reach (an exact host:port entry).
    outside = http.createServer((_request, response) => response.end('hello from outside'));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
    outsidePort = (outside.address() as AddressInfo).port;
    platform = await startTestPlatform({ mcpEgressAllowHosts: [`127.0.0.1:${outsidePort}`] });
    attacker = await createUser(platform, { alias: 'mallory', credits: 100 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await new Promise((resolve) => outside.close(resolve));
  });

  it('reaches what the operator allows through the egress proxy, and nothing else', async () => {
    // Prepare
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: attacker.token,
      body: { serverName: 'fetcher', description: 'x', sourceCode: FETCHING_MCP_SERVER },
    });
    expect(created.status).toBe(200);
    const serverId = created.body.data.serverId as string;
    const get = async (url: string) => {
      const call = await platform.api('POST', `/mcp/${serverId}`, {
        token: attacker.token,
        headers: ACCEPT,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get', arguments: { url } } },
      });
      return call.body.result.content[0].text as string;
    };

    // Act
    const allowed = await get(`http://127.0.0.1:${outsidePort}/`);
    const platformItself = await get(`${platform.url}/health`);

    // Assess
    expect(allowed).toBe('status 200: hello from outside');
    expect(platformItself).toMatch(/^failed: /);
  });

  it('cannot signal the platform, reach its port, read its data or see its processes', async () => {
    // Prepare
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: attacker.token,
      body: { serverName: 'escape', description: 'x', sourceCode: ESCAPING_MCP_SERVER },
    });
    expect(created.status).toBe(200);
    const serverId = created.body.data.serverId as string;
    const platformPort = Number(new URL(platform.url).port);

    // Act
    const call = await platform.api('POST', `/mcp/${serverId}`, {
      token: attacker.token,
      headers: ACCEPT,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'escape', arguments: { platformPid: process.pid, platformPort, dataDir: platform.dataDir } },
      },
    });
    const health = await platform.api('GET', '/health');

    // Assess: the platform was never stopped and still answers
    expect(processState(process.pid)).not.toBe('T');
    expect(health.status).toBe(200);
    expect(call.status).toBe(200);
    const results = JSON.parse(call.body.result.content[0].text) as Record<
      'stopParent' | 'stopPlatform' | 'fetchPlatform' | 'connectPlatform' | 'readAdminToken' | 'listProcesses',
      AttemptResult
    > & { ppid: number };
    // Inside its own pid namespace the host's parent is the sandbox's init, never the platform.
    expect(results.ppid).not.toBe(process.pid);
    expect(results.stopPlatform.ok).toBe(false);
    expect(results.fetchPlatform.ok).toBe(false);
    expect(results.connectPlatform.ok).toBe(false);
    expect(results.readAdminToken.ok).toBe(false);
    expect(JSON.stringify(results)).not.toContain(platform.adminToken);
    // Only the sandbox's own few processes, whatever runs on the machine.
    if (results.listProcesses.ok) expect(results.listProcesses.value!.split(',').length).toBeLessThan(5);
  });
});

/**
 * A voice agent (Strands' bidi interface in plain Python, within what the checker allows) that,
 * when its call starts, points the AWS SDK at the platform's port and at its stores' (the DynamoDB
 * and S3 stand-ins, which hold every tenant's data) and reports what came back as its first
 * transcript. `{{...}}` are filled in by the test.
 */
const PROBING_VOICE_AGENT = voiceAgentSource({
  preamble: `
    import json
    import boto3
    from botocore.config import Config

    def attempt(port):
        client = boto3.client("s3", endpoint_url="http://127.0.0.1:" + str(port), region_name="us-east-1",
                              aws_access_key_id="probe", aws_secret_access_key="probe",
                              config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=2))
        try:
            return {"ok": True, "value": str(client.list_buckets())[:200]}
        except Exception as error:
            return {"ok": False, "error": type(error).__name__ + ": " + str(error)[:160]}`,
  start: `
    results = {"platform": attempt({{PORT}}), "dynamo": attempt({{DYNAMO_PORT}}), "s3": attempt({{S3_PORT}})}
    await self.events.put({"type": "bidi_transcript_stream", "role": "assistant", "text": json.dumps(results), "is_final": True})`,
});

/** Pids of this file's running voice session processes (the session runner's module is on their command line). */
function voiceSessionPids(): number[] {
  // The interpreter itself, not bubblewrap, which carries the same arguments outside the namespaces.
  return descendantProcesses(([program, ...args]) => program !== undefined && !program.endsWith('bwrap') && args.includes('platform_runtime.bidi_session'));
}

describe('isolation: a voice call runs its agent inside the OS sandbox', () => {
  let platform: TestPlatform;
  let attacker: { token: string };
  let voiceUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    attacker = await createUser(platform, { alias: 'eve', credits: 100 });
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it("cannot reach the platform's stores from a call, and runs as another user in its own namespaces", async () => {
    // Prepare
    const { config } = platform.running.ports;
    const source = PROBING_VOICE_AGENT.replaceAll('{{PORT}}', new URL(platform.url).port)
      .replaceAll('{{DYNAMO_PORT}}', new URL(config.DYNAMODB_ENDPOINT!).port)
      .replaceAll('{{S3_PORT}}', new URL(config.S3_ENDPOINT!).port);
    const created = await platform.api('POST', '/agent/create', {
      token: attacker.token,
      body: { agentName: 'probe-call', description: 'x', sourceCode: source, agentType: 'bidi' },
    });
    expect(created.status, created.text).toBe(200);
    const agentId = created.body.data.agentId as string;
    const before = new Set(voiceSessionPids());

    // Act: open a call; the agent's first transcript is its report. While the call is up, look at
    // its process from outside.
    const ws = new WebSocket(`${voiceUrl}/ws/${agentId}?token=${attacker.token}`);
    const report = await new Promise<string>((resolve, reject) => {
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const frame = JSON.parse(String(data)) as { type: string; text?: string };
        if (frame.type === 'transcript' && frame.text !== undefined) resolve(frame.text);
      });
      ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)} before the report`)));
    });
    const session = voiceSessionPids().filter((pid) => !before.has(pid));
    const seen = session.map((pid) => ({
      uid: Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]),
      namespaces: ['net', 'pid', 'mnt', 'ipc'].filter((ns) => readlinkSync(`/proc/${pid}/ns/${ns}`) === readlinkSync(`/proc/self/ns/${ns}`)),
      interfaces: readFileSync(`/proc/${pid}/net/dev`, 'utf8')
        .split('\n')
        .slice(2)
        .map((line) => line.split(':')[0]!.trim())
        .filter(Boolean),
    }));
    ws.send(JSON.stringify({ type: 'end' }));
    await new Promise((resolve) => ws.once('close', resolve));

    // Assess: the platform's own host is one agents may call (their MCP servers live there), so
    // that request arrived and was answered; the stores were refused by the egress proxy. The
    // session's processes share no namespace with the platform and have only their own loopback.
    const results = JSON.parse(report) as Record<'platform' | 'dynamo' | 's3', AttemptResult>;
    expect(results.platform.error, report).toMatch(/\(404\)/);
    expect(results.dynamo.ok, report).toBe(false);
    expect(results.dynamo.error, report).toMatch(/\(403\)/);
    expect(results.s3.ok, report).toBe(false);
    expect(results.s3.error, report).toMatch(/\(403\)/);
    expect(seen.length).toBeGreaterThan(0);
    for (const sandboxed of seen) {
      if (process.getuid?.() === 0) expect(sandboxed.uid).not.toBe(0);
      expect(sandboxed.namespaces).toEqual([]);
      expect(sandboxed.interfaces).toEqual(['lo']);
    }
  });
});

/**
 * A plain-Python agent that takes as many threads as the kernel gives it, within what the checker
 * allows: boto3's transfer manager starts a worker thread per upload, and an upload of a file whose
 * every read waits holds its worker. It says how many it got and why it stopped, then holds them
 * until its run is ended.
 */
const THREAD_HOARDING_AGENT = `import time
import boto3
from boto3.s3.transfer import S3TransferConfig, TransferManager


class Stalled:
    def read(self, size=-1):
        time.sleep(600)
        return b""

    def seek(self, offset, whence=0):
        time.sleep(600)
        return 0

    def tell(self):
        time.sleep(600)
        return 0


class HoardingAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
        manager = TransferManager(client, S3TransferConfig(max_submission_concurrency=100000, max_submission_queue_size=100000))
        held = 0
        refused = "never"
        while held < 5000:
            try:
                manager.upload(Stalled(), "bucket", "key" + str(held))
            except Exception as error:
                refused = type(error).__name__ + ": " + str(error)
                break
            held += 1
        yield {"data": "held " + str(held) + " threads; refused with " + refused + "\\n"}
        time.sleep(600)
        yield {"data": "released"}


def create_agent():
    return HoardingAgent(), []
`;

const ECHO_AGENT = `class EchoAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": "echo: " + prompt}


def create_agent():
    return EchoAgent(), []
`;

/** The kernel counts RLIMIT_NPROC per uid; the platform sets it only when it can give sandboxes uids (as root). */
describe.skipIf(process.getuid?.() !== 0)("isolation: one tenant's processes and threads are counted apart from every other tenant's", () => {
  /** Small, so that the hoarding agent reaches it within its memory; the setting's lowest value. */
  const LIMIT = 64;
  let platform: TestPlatform;
  let attacker: { token: string };
  let bystander: { token: string };

  beforeAll(async () => {
    platform = await startTestPlatform({ sandbox: { maxProcesses: LIMIT }, voiceSpares: 0 });
    attacker = await createUser(platform, { alias: 'hoarder', credits: 100 });
    bystander = await createUser(platform, { alias: 'bystander', credits: 100 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  async function createAgent(token: string, agentName: string, sourceCode: string): Promise<string> {
    const created = await platform.api('POST', '/agent/create', { token, body: { agentName, description: 'x', sourceCode, memoryMb: 2048 } });
    expect(created.status, created.text).toBe(200);
    return created.body.data.agentId as string;
  }

  it("leaves another tenant's runs starting and succeeding while one tenant is at its limit", async () => {
    // Prepare
    const hoarding = await createAgent(attacker.token, 'hoarder', THREAD_HOARDING_AGENT);
    const echo = await createAgent(bystander.token, 'echo', ECHO_AGENT);
    const hold = new AbortController();

    // Act: the attacker's run takes every thread it can and keeps them while the bystander chats.
    const hoarded = await fetch(`${platform.url}/stream/agent/${hoarding}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${attacker.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'take them all' }),
      signal: hold.signal,
    });
    let report = '';
    const reader = hoarded.body!.getReader();
    const decoder = new TextDecoder();
    while (!report.includes('refused with')) {
      const { value, done } = await reader.read();
      if (done) break;
      report += decoder.decode(value, { stream: true });
    }
    const chat = await platform.api('POST', `/agent/${echo}/chat`, { token: bystander.token, body: { prompt: 'still here?' } });
    hold.abort();
    await reader.cancel().catch(() => undefined);

    // Assess: the attacker was stopped by its own limit, and the bystander's run never noticed.
    expect(report).toMatch(/held \d+ threads; refused with RuntimeError: can't start new thread/);
    expect(Number(/held (\d+)/.exec(report)?.[1])).toBeLessThan(LIMIT);
    expect(chat.status, chat.text).toBe(200);
    expect(JSON.stringify(chat.body)).toContain('echo: still here?');
  });
});
