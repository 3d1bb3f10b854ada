import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runLauncher, runCliInProcess, type CliResult } from '../support/cli.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** An empty config directory: the operator commands here must work without any stored login. */
let configHome: string;

/** Runs the CLI through its launcher with no stored login. */
function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runLauncher(args, { env: { XDG_CONFIG_HOME: configHome, ...env } });
}

/** A local port nothing listens on: bound, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

describe('operator commands of the CLI against the local platform', () => {
  let platform: TestPlatform;
  let asAdmin: string[];

  beforeAll(async () => {
    configHome = await mkdtemp(join(tmpdir(), 'cli-config-'));
    platform = await startTestPlatform();
    asAdmin = ['--url', platform.url, '--token', platform.adminToken];
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await rm(configHome, { recursive: true, force: true });
  });

  it('creates a user whose token works against the API', async () => {
    // Act
    const result = await runCli(['users', 'create', '--alias', 'cli-alice', '--email', 'alice@example.com', '--credits', '25', ...asAdmin]);
    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Created user \S+/);
    expect(result.stdout).toContain('alias:       cli-alice');
    expect(result.stdout).toMatch(/shown only once/);
    const token = /\b(svc_ut_\w+)/.exec(result.stdout)?.[1];
    expect(token).toBeDefined();
    const info = await platform.api('GET', '/user/info', { token: token! });
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({ alias: 'cli-alice', email: 'alice@example.com', credits: 25, isAdmin: false });
  });

  it('prints the raw data with --json', async () => {
    // Act
    const result = await runCli(['users', 'create', '--json', ...asAdmin]);
    // Assess
    expect(result.code).toBe(0);
    const data = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(['alias', 'secretKey', 'token', 'tokenId', 'userId']);
    expect(data['alias']).toBeNull();
  });

  it('lists the users it created', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'cli-listed' });
    // Act
    const human = await runCli(['users', 'list', ...asAdmin]);
    const json = await runCli(['users', 'list', '--limit', '100', '--json', ...asAdmin]);
    // Assess
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^${user.userId}\\s+cli-listed\\s`, 'm'));
    expect(human.stdout).toMatch(/^USER ID\s+ALIAS/m);
    const page = JSON.parse(json.stdout) as { users: { userId: string; alias: string | null }[]; count: number };
    expect(page.users).toContainEqual(expect.objectContaining({ userId: user.userId, alias: 'cli-listed' }));
    expect(page.count).toBe(page.users.length);
  });

  it('pages through users with --limit and --cursor', async () => {
    // Prepare
    await createUser(platform);
    await createUser(platform);
    // Act
    const first = JSON.parse((await runCli(['users', 'list', '--limit', '1', '--json', ...asAdmin])).stdout) as {
      users: { userId: string }[];
      nextCursor: string | null;
    };
    const second = JSON.parse((await runCli(['users', 'list', '--limit', '1', '--cursor', first.nextCursor ?? '', '--json', ...asAdmin])).stdout) as {
      users: { userId: string }[];
    };
    // Assess
    expect(first.users).toHaveLength(1);
    expect(first.nextCursor).not.toBeNull();
    expect(second.users).toHaveLength(1);
    expect(second.users[0]!.userId).not.toBe(first.users[0]!.userId);
  });

  it('grants credits and takes them back, changing the balance', async () => {
    // Prepare
    const user = await createUser(platform, { credits: 10 });
    // Act
    const granted = await runCli(['credits', 'grant', user.userId, '--amount', '40', '--reason', 'welcome bonus', ...asAdmin]);
    const corrected = await runCli(['credits', 'grant', user.userId, '--amount', '-5', '--reason', 'correction', ...asAdmin]);
    // Assess
    expect(granted.code).toBe(0);
    expect(granted.stdout).toContain(`Granted 40 credits to ${user.userId} (welcome bonus); balance now 50.`);
    expect(corrected.code).toBe(0);
    expect(corrected.stdout).toContain(`Took back 5 credits from ${user.userId} (correction); balance now 45.`);
    const info = await platform.api('GET', '/user/info', { token: user.token });
    expect(info.body.data.credits).toBe(45);
  });

  it('shows the platform error for an unknown user', async () => {
    // Act
    const result = await runCli(['credits', 'grant', 'no-such-user', '--amount', '1', '--reason', 'test', ...asAdmin]);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: User no-such-user not found\. \(NOT_FOUND, HTTP 404, request \S+\)/);
  });

  it('says whose token it is', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'cli-whoami', credits: 7 });
    // Act
    const result = await runCli(['whoami', '--url', platform.url, '--token', user.token]);
    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`cli-whoami  ${user.userId}`);
    expect(result.stdout).toMatch(/credits: 7\b/);
  });

  it('reads the URL and token from the environment, the token falling back to DATA_DIR/admin-token', async () => {
    // Act
    const fromFile = await runCli(['whoami', '--json'], { PLATFORM_URL: platform.url, DATA_DIR: platform.dataDir });
    // Assess
    expect(fromFile.stderr).toBe('');
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ alias: 'admin', isAdmin: true });
  });

  it('refuses admin commands with a non-admin token: the platform message, exit 1', async () => {
    // Prepare
    const user = await createUser(platform);
    // Act
    const result = await runCli(['users', 'list', '--url', platform.url, '--token', user.token]);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Error: This endpoint is for platform operators only. (ACCESS_DENIED, HTTP 403');
  });

  it('explains an unreachable platform and how to start one', async () => {
    // Prepare
    const url = `http://127.0.0.1:${await closedPort()}`;
    // Act
    const result = await runCli(['whoami', '--url', url, '--token', 'svc_ut_unused']);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The platform is not reachable at ${url}`);
    expect(result.stderr).toContain('npm start');
  });

  it.each([
    ['no command', []],
    ['an unknown command', ['users', 'delete']],
    ['users without a subcommand', ['users']],
    ['credits grant without a user id', ['credits', 'grant', '--amount', '5', '--reason', 'x']],
    ['credits grant without --amount', ['credits', 'grant', 'someone', '--reason', 'x']],
    ['credits grant without --reason', ['credits', 'grant', 'someone', '--amount', '5']],
    ['a non-numeric amount', ['credits', 'grant', 'someone', '--amount', 'lots', '--reason', 'x']],
    ['an option of another command', ['whoami', '--alias', 'x']],
    ['an unknown option', ['users', 'list', '--everything']],
  ])('exits 2 with the usage text on %s', async (_case, args) => {
    // Act: refused before any connection, so in this process (the exit code as bin/cli.ts sets it)
    const result = await runCliInProcess([...args, ...asAdmin]);
    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: agent-platform <command> [options]');
  });

  it('prints the usage text for help and --help, exit 0', async () => {
    // Act: `help` as its own process, the flags in this one
    const results = await Promise.all([runCli(['help']), runCliInProcess(['--help']), runCliInProcess(['users', '-h'])]);
    // Assess
    for (const result of results) {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('credits grant <userId> --amount N --reason R');
    }
  });
});
