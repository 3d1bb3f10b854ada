/**
 * `npm start` runs the platform from its esbuild build (bin/start.mjs, lib/local/build.ts): built on
 * the first start, reused while its inputs are unchanged, rebuilt when a source changes. These
 * tests spawn the launcher as `npm start` does, into build roots of their own (inside the project,
 * where the bundle's packages resolve), and a real edit in a temporary copy of the sources.
 */
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { importFromBundle, loadAreas, loadEveryRoute } from '../../lib/local/handlers.ts';
import { forkStoresProcess } from '../../lib/local/stores-fork.ts';
import { localStoresLayout } from '../../lib/local/stores-layout.ts';
import { startLocalStores, tableInputs, type StoresLayout } from '../../lib/local/stores.ts';
import { areas, routes } from '../../lib/manifest/index.ts';
import { spawnPlatform } from '../support/platform-process.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const cleanUp: string[] = [];

async function tempDir(parent: string, prefix: string): Promise<string> {
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, prefix));
  cleanUp.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of cleanUp) await rm(dir, { recursive: true, force: true });
});

/** `npm start`'s command, from `root`, with its own build root and data directory. */
function startBuilt(root: string, env: { LOCAL_BUILD_DIR: string; DATA_DIR: string }) {
  return spawnPlatform(['bin/start.mjs'], { cwd: root, env: { PORT: '0', ...env } });
}

async function healthOf(url: string): Promise<{ status: number; body: { data?: Record<string, unknown> } }> {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> } };
}

describe('the built start (npm start)', () => {
  let buildRoot: string;

  it('builds on first start, serves /health and an authenticated call, and stops cleanly on SIGTERM', async () => {
    // Prepare
    buildRoot = await tempDir(join(repoRoot, '.tmp', 'test-builds'), 'start-');
    const dataDir = await tempDir(tmpdir(), 'platform-built-');

    // Act
    const run = startBuilt(repoRoot, { LOCAL_BUILD_DIR: buildRoot, DATA_DIR: dataDir });
    const url = await run.ready;
    const health = await healthOf(url);
    const token = (await readFile(join(dataDir, 'admin-token'), 'utf8')).trim();
    const info = await fetch(`${url}/user/info`, { headers: { authorization: `Bearer ${token}` } });
    const anonymous = await fetch(`${url}/user/info`);
    const code = await run.stop();

    // Assess
    expect(run.output().stdout).toContain('Building the local platform into');
    expect(health.status).toBe(200);
    expect(health.body.data).toMatchObject({ status: 'ok' });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { data: { alias: string } }).data.alias).toBe('admin');
    expect(anonymous.status).toBe(401);
    expect(code).toBe(0);
    await expect(stat(join(dataDir, 'platform.pid'))).rejects.toThrow();
  });

  it('starts from the existing build without building again while nothing changed', async () => {
    // Prepare
    const dataDir = await tempDir(tmpdir(), 'platform-built-');

    // Act
    const run = startBuilt(repoRoot, { LOCAL_BUILD_DIR: buildRoot, DATA_DIR: dataDir });
    const url = await run.ready;
    const health = await healthOf(url);
    const code = await run.stop();

    // Assess
    expect(health.status).toBe(200);
    expect(run.output().stdout).not.toMatch(/Building|rebuilding/);
    expect(code).toBe(0);
  });

  it("gives an empty data directory the build's seed of the platform's tables, and never a seed of other tables", async () => {
    // Prepare
    const current = JSON.parse(await readFile(join(buildRoot, 'current.json'), 'utf8')) as { storesProcess: string };
    const storesEntry = join(buildRoot, current.storesProcess);
    const seed = join(storesEntry, '..', 'seed');
    const platformLayout = localStoresLayout(areas);
    const otherLayout: StoresLayout = { ...platformLayout, prefix: 'other-' };
    const startedAt = Date.now() / 1000;

    // Act
    const tablesOf = async (layout: StoresLayout) => {
      const stores = await startLocalStores(await tempDir(tmpdir(), 'stores-seeded-'), layout, forkStoresProcess(storesEntry, seed));
      const client = new DynamoDBClient({ region: 'us-east-1', endpoint: stores.dynamoEndpoint, credentials: stores.credentials });
      try {
        const names = (await client.send(new ListTablesCommand({}))).TableNames ?? [];
        return await Promise.all(names.map(async (TableName) => (await client.send(new DescribeTableCommand({ TableName }))).Table!));
      } finally {
        client.destroy();
        await stores.close();
      }
    };
    const seeded = await tablesOf(platformLayout);
    const created = await tablesOf(otherLayout);

    // Assess: the seed's tables were made by the build, before this test; the other layout's by its own start
    const shape = (table: (typeof seeded)[number]) => ({
      TableName: table.TableName,
      KeySchema: table.KeySchema,
      GlobalSecondaryIndexes: table.GlobalSecondaryIndexes?.map((index) => ({ IndexName: index.IndexName, KeySchema: index.KeySchema })),
    });
    const expected = (layout: StoresLayout) =>
      tableInputs(layout).map((input) => ({
        TableName: input.TableName,
        KeySchema: input.KeySchema,
        GlobalSecondaryIndexes: input.GlobalSecondaryIndexes?.map((index) => ({ IndexName: index.IndexName, KeySchema: index.KeySchema })),
      }));
    const byName = <T extends { TableName?: string | undefined }>(rows: T[]) => [...rows].sort((a, b) => a.TableName!.localeCompare(b.TableName!));
    expect(byName(seeded.map(shape))).toEqual(byName(expected(platformLayout)));
    expect(seeded.every((table) => table.TableStatus === 'ACTIVE' && table.CreationDateTime!.getTime() / 1000 < startedAt)).toBe(true);
    expect(byName(created.map(shape))).toEqual(byName(expected(otherLayout)));
    expect(created.every((table) => table.TableStatus === 'ACTIVE' && table.CreationDateTime!.getTime() / 1000 >= startedAt - 1)).toBe(true);
  });

  it("holds every handler module of the manifest, each exporting its route's kind of definition", async () => {
    // Prepare
    const current = JSON.parse(await readFile(join(buildRoot, 'current.json'), 'utf8')) as { handlerModules: string };
    const { handlerModules } = (await import(pathToFileURL(join(buildRoot, current.handlerModules)).href)) as {
      handlerModules: Record<string, () => Promise<unknown>>;
    };

    // Act
    const loaded = await loadAreas(areas, importFromBundle(handlerModules));
    const bound = await loadEveryRoute(loaded);

    // Assess
    expect(bound.map((b) => b.spec)).toEqual(expect.arrayContaining([...routes]));
    expect(bound).toHaveLength(routes.length);
  });

  it('rebuilds after a source file changes, and serves the changed code', async () => {
    // Prepare: a copy of the sources (the packages linked), built once by a first start.
    const copy = await tempDir(tmpdir(), 'platform-copy-');
    for (const entry of ['bin', 'lib', 'functions', 'widget', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      await cp(join(repoRoot, entry), join(copy, entry), { recursive: true, preserveTimestamps: true });
    }
    await symlink(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
    const env = { LOCAL_BUILD_DIR: '.tmp/local-build', DATA_DIR: join(copy, '.data') };
    const first = startBuilt(copy, env);
    const before = await healthOf(await first.ready);
    await first.stop();
    const handler = join(copy, 'functions', 'discovery', 'handlers', 'get-health.handler.ts');
    const source = await readFile(handler, 'utf8');
    expect(source).toContain("status: 'ok'");

    // Act
    await writeFile(handler, source.replace("status: 'ok'", "status: 'ok', edited: true"));
    const second = startBuilt(copy, env);
    const after = await healthOf(await second.ready);
    const code = await second.stop();

    // Assess
    expect(before.body.data).not.toHaveProperty('edited');
    expect(second.output().stdout).toContain('functions/discovery/handlers/get-health.handler.ts changed: rebuilding');
    expect(after.body.data).toMatchObject({ status: 'ok', edited: true });
    expect(code).toBe(0);
  });
});
