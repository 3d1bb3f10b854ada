import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, recordOutput, runCli as runLauncher, runCliInProcess, runNpm, spawnCli, type CliResult } from '../support/cli.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** The runtime's own plain-Python test agents: the same interface as Strands, no framework needed. */
const fixture = (name: string) => new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url).pathname;

const ECHO_MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'hello', version: '1.0.0' });
  server.registerTool('hello', { description: 'Says hello' }, async () => ({ content: [{ type: 'text', text: 'hello' }] }));
  return server;
};
`;

const ACTION = `def handler(event, context):
    return {"statusCode": 200, "body": "ok"}
`;

describe('developer commands of the CLI against the local platform', () => {
  let platform: TestPlatform;
  let user: { userId: string; token: string };
  let configHome: string;
  let work: string;

  /** The CLI as the user runs it, with this test's config directory: the stored login is the only credential. */
  const runCli = (args: readonly string[], input?: string): Promise<CliResult> =>
    runLauncher(args, { env: { XDG_CONFIG_HOME: configHome, DATA_DIR: work }, ...(input === undefined ? {} : { input }) });
  const credentials = () => join(configHome, 'agent-platform', 'credentials.json');

  beforeAll(async () => {
    configHome = await mkdtemp(join(tmpdir(), 'cli-config-'));
    work = await mkdtemp(join(tmpdir(), 'cli-work-'));
    await writeFile(join(work, 'hello-mcp.js'), ECHO_MCP_SERVER);
    await writeFile(join(work, 'greet.py'), ACTION);
    platform = await startTestPlatform();
    user = await createUser(platform, { alias: 'cli-dev', credits: 100 });
    // Every later command finds its address and token in the stored login (DATA_DIR holds no admin token).
    const login = await runCli(['login', '--url', platform.url, '--token', '-'], `${user.token}\n`);
    if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await rm(configHome, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  it('login stores the checked token readable by the owner only, and never prints it', async () => {
    // Act
    const again = await runCli(['login', '--url', platform.url, '--token', '-'], user.token);
    const whoami = await runCli(['whoami', '--json']);
    // Assess
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Logged in to ${platform.url} as cli-dev (${user.userId}).`);
    expect(again.stdout + again.stderr).not.toContain(user.token);
    expect((await stat(credentials())).mode & 0o777).toBe(0o600);
    expect((await stat(join(configHome, 'agent-platform'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(credentials(), 'utf8'))).toEqual({ url: platform.url, token: user.token });
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ userId: user.userId, alias: 'cli-dev' });
  });

  it('never sends the stored token to another address', async () => {
    // Act
    const elsewhere = await runCli(['whoami', '--url', 'http://127.0.0.1:9']);
    // Assess
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^No access token: run `agent-platform login`/);
  });

  it('login refuses a token the platform does not accept, keeping the stored one', async () => {
    // Act
    const result = await runCli(['login', '--url', platform.url, '--token', 'svc_ut_not-a-real-token']);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: .* \(AUTHENTICATION_REQUIRED, HTTP 401/);
    expect(JSON.parse(await readFile(credentials(), 'utf8'))).toMatchObject({ token: user.token });
  });

  it('deploys an agent, then updates the same one by name instead of creating another', async () => {
    // Act
    const created = await runCli(['agents', 'deploy', fixture('echo_agent'), '--name', 'cli-echo', '--description', 'Echoes']);
    const updated = await runCli(['agents', 'deploy', fixture('echo_agent'), '--name', 'cli-echo', '--description', 'Echoes, again']);
    // Assess
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^Created agent cli-echo \([0-9a-f-]{36}\)\./);
    expect(updated.stdout).toMatch(/^Updated agent cli-echo \([0-9a-f-]{36}\)\./);
    const listed = await platform.api('GET', '/agent/list', { token: user.token });
    const named = (listed.body.data.agents as { agentName: string; description: string }[]).filter((a) => a.agentName === 'cli-echo');
    expect(named).toEqual([expect.objectContaining({ description: 'Echoes, again' })]);
  });

  it('deploys over a deleted agent of the same name by restoring it', async () => {
    // Prepare
    const created = JSON.parse((await runCli(['agents', 'deploy', fixture('echo_agent'), '--name', 'cli-phoenix', '--json'])).stdout) as { id: string };
    await platform.api('DELETE', '/agent/delete', { token: user.token, body: { agentId: created.id } });
    // Act
    const again = await runCli(['agents', 'deploy', fixture('echo_agent'), '--name', 'cli-phoenix']);
    // Assess
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Restored (it had been deleted) and updated agent cli-phoenix (${created.id}).`);
    const agent = await platform.api('GET', `/agent/${created.id}`, { token: user.token });
    expect(agent.body.data.status).toBe('active');
  });

  it('deploys an MCP server named after its file, and a second deploy writes its next version', async () => {
    // Act
    const first = await runCli(['mcp', 'deploy', join(work, 'hello-mcp.js'), '--json']);
    const second = await runCli(['mcp', 'deploy', join(work, 'hello-mcp.js'), '--json']);
    // Assess
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ result: 'created', kind: 'mcp', name: 'hello-mcp', version: 1, tools: ['hello'] });
    expect(JSON.parse(second.stdout)).toMatchObject({ result: 'updated', name: 'hello-mcp', version: 2 });
    const listed = await platform.api('GET', '/mcp-admin/list', { token: user.token });
    expect((listed.body.data.servers as { serverName: string }[]).filter((s) => s.serverName === 'hello-mcp')).toHaveLength(1);
  });

  it('lists agents, actions and MCP servers as tables and as JSON', async () => {
    // Prepare
    await runCli(['actions', 'deploy', join(work, 'greet.py'), '--category', 'demo']);
    // Act
    const tables = await runCli(['ls']);
    const actions = await runCli(['ls', 'actions', '--json']);
    // Assess
    expect(tables.code).toBe(0);
    expect(tables.stdout).toMatch(/^Agents \(\d+\)\nNAME\s+ID\s+VISIBILITY\s+UPDATED\n/m);
    expect(tables.stdout).toMatch(/^cli-echo\s+[0-9a-f-]{36}\s+private\s/m);
    expect(tables.stdout).toMatch(/^greet\s+act-\S+\s+development\s+private\s/m);
    expect(tables.stdout).toMatch(/^hello-mcp\s+mcp-\S+\s+2\s+hello\s+private\s/m);
    expect(JSON.parse(actions.stdout)).toEqual([expect.objectContaining({ actionName: 'greet', category: 'demo' })]);
  });

  it('chat streams the reply to stdout, the conversation id to stderr, and continues a conversation', async () => {
    // Act
    const first = await runCli(['chat', 'cli-echo', 'hello there']);
    const conversationId = /conversation ([0-9a-f-]{36})/.exec(first.stderr)?.[1];
    const second = await runCli(['chat', 'cli-dev/cli-echo', 'and again', '--conversation', conversationId ?? '', '--json']);
    // Assess
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('echo: hello there\n');
    expect(conversationId).toBeDefined();
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ conversationId, text: 'echo: and again', error: null, metrics: { totalTokens: 7 } });
  });

  it('chat names tool starts on stderr, and a failed run exits 1 with the error code', async () => {
    // Prepare
    await runCli(['agents', 'deploy', fixture('tool_agent'), '--name', 'cli-tools']);
    await runCli(['agents', 'deploy', fixture('raising_agent'), '--name', 'cli-raises']);
    // Act
    const tools = await runCli(['chat', 'cli-tools', 'go']);
    const raises = await runCli(['chat', 'cli-raises', 'go']);
    // Assess
    expect(tools.code).toBe(0);
    expect(tools.stdout).toBe('mcp entered done\n');
    expect(tools.stderr).toMatch(/\[tool weather\]\n\[tool calculator\]\n/);
    expect(raises.code).toBe(1);
    expect(raises.stdout).toBe('about to fail\n');
    expect(raises.stderr).toMatch(/^Error: .+ \(AGENT_EXECUTION_FAILED\)$/m);
  });

  it('logs --follow prints a record made after it started, and Ctrl-C ends it with exit 0', async () => {
    // Prepare
    const follower = await spawnCli(['logs', '--follow', '--limit', '1'], { env: { XDG_CONFIG_HOME: configHome, DATA_DIR: work } });
    const printed = recordOutput(follower.stdout);
    const result = finished(follower);
    await recordOutput(follower.stderr).until(/Following new records/);
    // Act
    const chat = await runCli(['chat', 'cli-echo', 'logged later', '--json']);
    const requestId = (await platform.api('GET', '/logs?pageSize=1', { token: user.token })).body.data.logs[0].requestId as string;
    await printed.until(new RegExp(requestId));
    follower.kill('SIGINT');
    const followed = await result;
    // Assess
    expect(chat.code).toBe(0);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/^TIME\s+STATUS\s+TYPE\s+RESOURCE/);
    expect(followed.stdout).toMatch(new RegExp(`success\\s+AGENT_CHAT\\s+[0-9a-f-]{36}\\s+\\d+\\s+1\\s+${requestId}`));
    expect(followed.stdout.match(new RegExp(requestId, 'g'))).toHaveLength(1);
  });

  it('keys set reads the value from stdin or --value and never prints it; ls and rm manage them', async () => {
    // Act
    const fromStdin = await runCli(['keys', 'set', 'openai'], 'sk-from-stdin-1234\n');
    const fromFlag = await runCli(['keys', 'set', 'maps', '--value', 'mk-from-flag-5678']);
    const listed = await runCli(['keys', 'ls']);
    const removed = await runCli(['keys', 'rm', 'maps']);
    const afterwards = await runCli(['keys', 'ls', '--json']);
    // Assess
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toBe('Stored the openai key.\n');
    expect(fromFlag.stdout).toBe('Stored the maps key.\n');
    for (const output of [fromStdin, fromFlag, listed]) expect(output.stdout + output.stderr).not.toMatch(/from-stdin|from-flag/);
    expect(listed.stdout).toMatch(/^SERVICE\s+HINT\s+UPDATED\nmaps\s+\*+5678\s.*\nopenai\s+\*+1234\s/m);
    expect(removed.stdout).toBe('Deleted the maps key.\n');
    expect(JSON.parse(afterwards.stdout)).toEqual([expect.objectContaining({ serviceName: 'openai' })]);
  });

  it('credits shows the balance and the latest ledger entries', async () => {
    // Act
    const human = await runCli(['credits']);
    const json = await runCli(['credits', '--json']);
    // Assess
    const balance = JSON.parse(json.stdout) as { credits: number; recentEntries: { reason: string }[] };
    expect(human.stdout).toContain(`Balance: ${balance.credits} credits`);
    expect(human.stdout).toMatch(/^TIME\s+AMOUNT\s+BALANCE\s+REASON$/m);
    expect(human.stdout).toMatch(/\+100\s+100\s+initial grant/);
    expect(balance.recentEntries).toContainEqual(expect.objectContaining({ reason: 'initial grant' }));
  });

  it("shows the platform's code and message in one line and exits 1", async () => {
    // Act
    const badName = await runCli(['agents', 'deploy', fixture('echo_agent')]);
    const noKey = await runCli(['keys', 'rm', 'never-stored']);
    // Assess
    expect(badName.code).toBe(1);
    expect(badName.stdout).toBe('');
    expect(badName.stderr).toMatch(/^Error: .*agentName.* \(INVALID_PARAMETERS, HTTP 400, request \S+\)\n$/);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/^Error: No key stored for never-stored\. \(NOT_FOUND, HTTP 404, request \S+\)\n$/);
  });

  it.each([
    ['deploy without a file', ['agents', 'deploy']],
    ['a file of the wrong kind', ['mcp', 'deploy', 'agent.py']],
    ['chat without a prompt', ['chat', 'cli-echo']],
    ['ls of an unknown kind', ['ls', 'widgets']],
    ['keys without a subcommand', ['keys']],
    ['an option of another command', ['ls', '--follow']],
  ])('exits 2 with the usage text on %s', async (_case, args) => {
    // Act: refused before any connection, so in this process (the exit code as bin/cli.ts sets it)
    const result = await runCliInProcess(args);
    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: agent-platform <command> [options]');
  });

  it('runs as npx agent-platform and as npm run cli from the checkout', async () => {
    // Act
    // A fresh npm cache: npx links the checkout into it on first use, which must work offline and leave the user's cache alone.
    const env = { XDG_CONFIG_HOME: configHome, npm_config_cache: join(work, 'npm-cache') };
    const [exec, script] = await Promise.all([
      runNpm(['exec', '--offline', '--', 'agent-platform', 'whoami'], env),
      runNpm(['run', '--silent', 'cli', '--', 'whoami'], env),
    ]);
    // Assess
    expect(exec.code).toBe(0);
    expect(exec.stdout).toContain(`cli-dev  ${user.userId}`);
    expect(script.code).toBe(0);
    expect(script.stdout).toContain(`cli-dev  ${user.userId}`);
  });

  it('logout removes the stored login; later commands then have no token for that address', async () => {
    // Act
    const out = await runCli(['logout']);
    const after = await runCli(['whoami', '--url', platform.url]);
    // Assess
    expect(out.code).toBe(0);
    await expect(stat(credentials())).rejects.toThrow(/ENOENT/);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/No access token: run `agent-platform login`/);
  });
});
