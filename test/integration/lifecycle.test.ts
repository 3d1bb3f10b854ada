import { createServer, type Server } from 'node:net';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalPlatform, StartupError } from '../../lib/local/platform.ts';
import { digestSecret } from '../../functions/core/auth/secrets.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { spawnPlatform, userEnvironment } from '../support/platform-process.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const tempDirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'platform-life-'));
  tempDirs.push(dir);
  return dir;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Every item of every table, as JSON text, through the DynamoDB API. */
async function dumpTables(client: DynamoDBClient): Promise<string> {
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  const items: unknown[] = [];
  for (const TableName of TableNames) {
    let ExclusiveStartKey: Record<string, never> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (ExclusiveStartKey !== undefined);
  }
  return JSON.stringify(items);
}

/** Runs `bin/local.ts` under tsx (`npm run dev`), which `npm start`'s build runs the same main as. */
function startProcess(env: Record<string, string>) {
  return spawnPlatform(['--import', 'tsx', 'bin/local.ts'], { cwd: repoRoot, env });
}

afterAll(async () => {
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
});

describe('platform lifecycle', () => {
  it('keeps users, aliases, tokens and credits across a restart, and does not recreate the admin', async () => {
    // Prepare
    const dataDir = await tempDir();
    const first = await startTestPlatform({ dataDir });
    const user = await createUser(first, { alias: 'persisted', credits: 42 });
    const adminToken = first.adminToken;
    await first.stop();

    // Act
    const second = await startTestPlatform({ dataDir });
    try {
      const info = await second.api('GET', '/user/info', { token: user.token });
      const alias = await second.api('POST', '/user/alias', { token: second.adminToken, body: { alias: 'persisted' } });

      // Assess
      expect(second.running.createdAdminToken).toBeNull();
      expect(second.adminToken).toBe(adminToken);
      expect(info.status).toBe(200);
      expect(info.body.data).toMatchObject({ alias: 'persisted', credits: 42 });
      expect(alias.status).toBe(409);
    } finally {
      await second.stop();
    }
  });

  it('stores no raw token or secret key anywhere in DATA_DIR, only digests', async () => {
    // Prepare
    const platform = await startTestPlatform({ dataDir: await tempDir() });
    const user = await createUser(platform, { alias: 'secretive' });
    const extra = (await platform.api('POST', '/user/token/create', { token: user.token, body: { name: 'x' } })).body.data.token as string;
    const regenerated = (await platform.api('POST', `/user/token/${user.tokenId}/regenerate`, { token: user.token })).body.data.token as string;
    const secrets = [user.token, user.secretKey, extra, regenerated];

    // Act
    const tables = await dumpTables(platform.running.ports.db.doc as unknown as DynamoDBClient);
    await platform.stop();
    const files = (await filesUnder(platform.dataDir)).filter((f) => !f.endsWith('admin-token'));
    const contents = await Promise.all(files.map((f) => readFile(f)));

    // Assess: the digests are there (so the search can see stored values) and the secrets are not.
    expect(tables).toContain(digestSecret(extra));
    expect(tables).toContain(digestSecret(user.secretKey));
    for (const secret of secrets) {
      expect(tables).not.toContain(secret);
      for (const [i, content] of contents.entries()) expect(content.includes(secret), files[i]).toBe(false);
    }
    const tokenFile = await stat(join(platform.dataDir, 'admin-token'));
    expect(tokenFile.mode & 0o777).toBe(0o600);
  });

  it('refuses a DATA_DIR held by another running platform', async () => {
    // Prepare
    const dataDir = await tempDir();
    const first = await startLocalPlatform({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent', env: userEnvironment() });
    try {
      // Act
      const second = startLocalPlatform({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent', env: userEnvironment() });
      // Assess
      await expect(second).rejects.toThrow(StartupError);
    } finally {
      await first.close();
    }
  });

  it('explains a port in use in one line and exits non-zero', async () => {
    // Prepare
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      // Act
      const run = startProcess({ PORT: String(port), DATA_DIR: await tempDir() });
      const code = await run.exited;
      // Assess
      expect(code).toBe(1);
      const lines = run.output().stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Port ${port}`);
      expect(lines[0]).toContain('already in use');
    } finally {
      blocker.close();
    }
  });

  it('explains a DATA_DIR in use by another process in one line', async () => {
    // Prepare
    const dataDir = await tempDir();
    const holder = startProcess({ PORT: '0', DATA_DIR: dataDir });
    await holder.ready;
    try {
      // Act
      const second = startProcess({ PORT: '0', DATA_DIR: dataDir });
      const code = await second.exited;
      // Assess
      expect(code).toBe(1);
      expect(second.output().stderr.trim()).toMatch(/^DATA_DIR .* is in use by another running platform \(pid \d+\)/);
    } finally {
      holder.child.kill('SIGTERM');
      await holder.exited;
    }
  });

  it('shuts down cleanly on SIGTERM and releases DATA_DIR', async () => {
    // Prepare
    const dataDir = await tempDir();
    const run = startProcess({ PORT: '0', DATA_DIR: dataDir });
    const url = await run.ready;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // Act
    run.child.kill('SIGTERM');
    const code = await run.exited;
    // Assess
    expect(code).toBe(0);
    await expect(stat(join(dataDir, 'platform.pid'))).rejects.toThrow();
    const restarted = await startLocalPlatform({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent', env: userEnvironment() });
    await restarted.close();
  });
});
