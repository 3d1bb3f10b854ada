/**
 * `npm run new:area` (bin/new-area.ts), run into a temporary copy of the repository's code (never
 * into this tree): the area it writes loads, joins the module list and passes `checkAreas`; its
 * route has its handler and is neither an unspecified route nor a change to the README's status
 * table; bad, taken or half-taken names are refused with nothing written.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaffoldRefusedError, scaffoldArea, singular } from '../../bin/new-area.ts';
import { routes as realRoutes } from '../../lib/manifest/index.ts';
import type * as Manifest from '../../lib/manifest/index.ts';
import type * as SpecCoverage from '../../lib/manifest/spec-coverage.ts';
import type { RouteDefinition } from '../../functions/core/http/route.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** What the scaffold, the area's modules and its test read: the code, the module list's one import outside it, the test support, the settings. */
const COPIED = ['functions', 'lib', 'widget/version.ts', 'test/support', 'package.json', 'tsconfig.json', '.prettierrc.json'];

/** The compiler's errors in `files` of the copy, checked with the repository's settings (only those files, so it stays affordable). */
function typeErrors(root: string, files: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error("cannot read the copy's tsconfig.json");
  const paths = files.map((file) => join(root, file));
  const program = ts.createProgram(paths, config.options);
  return paths.flatMap((path) => {
    const source = program.getSourceFile(path);
    if (source === undefined) return [`${path}: not in the program`];
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
      (d) => `${path}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
  });
}

async function repositoryCopy(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'new-area-'));
  for (const path of COPIED) await cp(join(repo, path), join(root, path), { recursive: true });
  await symlink(join(repo, 'node_modules'), join(root, 'node_modules'));
  return root;
}

const importFrom = <T>(root: string, path: string) => import(pathToFileURL(join(root, path)).href) as Promise<T>;

/** Every file under `dir` with its text, to show that a refused run changed nothing. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && !e.parentPath.includes('node_modules'));
  return new Map(await Promise.all(files.map(async (e) => [join(e.parentPath, e.name), await readFile(join(e.parentPath, e.name), 'utf8')] as const)));
}

describe('npm run new:area', () => {
  let root: string;
  let cli: { stdout: string; stderr: string };

  // No time limit: the run loads every area module, which takes what a loaded machine takes.
  beforeAll(async () => {
    // Prepare
    root = await repositoryCopy();
    // Act: the command as npm runs it, into the copy
    cli = await run(process.execPath, ['--import', 'tsx', 'bin/new-area.ts', 'daily-reports', '--root', root], { cwd: repo });
  }, 0);
  afterAll(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('writes the area, its test and the two list edits, and says what it wrote and what comes next', () => {
    // Assess
    expect(cli.stdout.split('\n').filter((line) => line.startsWith('  /'))).toEqual(
      [
        'functions/daily-reports/daily-reports.module.ts',
        'functions/daily-reports/daily-report.schema.ts',
        'functions/daily-reports/daily-report.store.ts',
        'functions/daily-reports/daily-report.service.ts',
        'functions/daily-reports/handlers/get-daily-report.handler.ts',
        'test/integration/daily-reports.test.ts',
        'lib/manifest/areas.ts: import and list entry dailyReportsArea',
        'lib/manifest/spec-coverage.ts: platform extra /daily-reports/ (the area is not in SPEC part 4)',
      ].map((line) => `  ${join(root, line)}`),
    );
    expect(cli.stdout).toContain(`npx vitest run ${join(root, 'test/integration/daily-reports.test.ts')}`);
  });

  it('adds a module that defineArea accepted and the module list serves, with its route, table and port', async () => {
    // Act
    const manifest = await importFrom<typeof Manifest>(root, 'lib/manifest/index.ts');
    const { dailyReportsArea } = await importFrom<{ dailyReportsArea: Manifest.AreaModule }>(root, 'functions/daily-reports/daily-reports.module.ts');

    // Assess
    expect(manifest.areas).toContain(dailyReportsArea);
    expect(() => manifest.checkAreas(manifest.areas)).not.toThrow();
    expect(dailyReportsArea.routes).toEqual([
      expect.objectContaining({
        id: 'daily-reports.get-daily-report',
        method: 'GET',
        host: 'base',
        path: '/daily-reports/{dailyReportId}',
        auth: 'required',
        callers: 'role',
      }),
    ]);
    expect(manifest.tables).toContainEqual({ name: 'daily-reports', partitionKey: 'userId', sortKey: 'dailyReportId' });
    expect(manifest.resourcesOf([dailyReportsArea]).tables).toContain('daily-reports');
    expect(Object.keys(dailyReportsArea.provides)).toEqual(['dailyReports']);
  });

  // No time limit: the compiler reads every module the area's files reach (the whole platform, through Ports).
  it('writes files that type-check with the repository settings, the module list and Ports included', () => {
    // Act
    const errors = typeErrors(root, [
      'functions/daily-reports/daily-reports.module.ts',
      'functions/daily-reports/daily-report.schema.ts',
      'functions/daily-reports/daily-report.store.ts',
      'functions/daily-reports/daily-report.service.ts',
      'functions/daily-reports/handlers/get-daily-report.handler.ts',
      'test/integration/daily-reports.test.ts',
      'lib/manifest/areas.ts',
      'lib/manifest/spec-coverage.ts',
    ]);

    // Assess
    expect(errors).toEqual([]);
  }, 0);

  it("gives the route a handler module that parses the route's parameters", async () => {
    // Prepare
    const manifest = await importFrom<typeof Manifest>(root, 'lib/manifest/index.ts');
    const route = manifest.routes.find((r) => r.area === 'daily-reports')!;

    // Act
    const { default: handler } = await importFrom<{ default: RouteDefinition }>(root, manifest.handlerModulePath(route));

    // Assess
    expect(handler.kind).toBe('buffered');
    expect(handler.params?.safeParse({ dailyReportId: 'daily-report-0Abc' }).success).toBe(true);
    expect(handler.params?.safeParse({ dailyReportId: '../users' }).success).toBe(false);
  });

  it("keeps the SPEC checks green: the area's paths are a platform extra and the README's status table does not change", async () => {
    // Prepare
    const manifest = await importFrom<typeof Manifest>(root, 'lib/manifest/index.ts');
    const coverage = await importFrom<typeof SpecCoverage>(root, 'lib/manifest/spec-coverage.ts');
    const endpoints = coverage.parseSpecEndpoints(await readFile(join(repo, 'docs/SPEC.md'), 'utf8'));
    const table = (routes: readonly Manifest.RouteSpec[]) => coverage.statusTable(coverage.groupBySection(coverage.checkCoverage(endpoints, routes)));

    // Act
    const unspecified = coverage.findUnspecifiedRoutes(endpoints, manifest.routes).map(coverage.formatRoute);

    // Assess
    expect(manifest.routes.length).toBe(realRoutes.length + 1);
    expect(unspecified).toEqual([]);
    expect(table(manifest.routes)).toBe(table(realRoutes));
  });

  it('refuses to write over anything: an existing area, or one file of it already there', async () => {
    // Prepare: a test file by the name the next area's would have
    await mkdir(join(root, 'test/integration'), { recursive: true });
    await writeFile(join(root, 'test/integration/weekly-digests.test.ts'), "// someone else's\n");
    const before = await snapshot(root);

    // Act
    const again = scaffoldArea({ name: 'daily-reports', root });
    const halfTaken = scaffoldArea({ name: 'weekly-digests', root });

    // Assess
    await expect(again).rejects.toThrow(new ScaffoldRefusedError('functions/daily-reports exists already: choose another name.'));
    await expect(halfTaken).rejects.toThrow(new ScaffoldRefusedError('test/integration/weekly-digests.test.ts exists already: nothing was written.'));
    expect(await snapshot(root)).toEqual(before);
  });

  it.each([
    ['Reports', /not an area name/],
    ['daily_reports', /not an area name/],
    ['daily--reports', /not an area name/],
    ['reports-', /not an area name/],
    ['9lives', /not an area name/],
    ['ab', /not an area name/],
    ['stars', /functions\/stars exists already/],
    ['core', /functions\/core exists already/],
    ['agent', /routes under \/agent\//],
    ['usage-logs', /a table named usage-logs/],
  ])('refuses %s, writing nothing', async (name, reason) => {
    // Prepare
    const before = await snapshot(root);

    // Act
    const refused = scaffoldArea({ name, root });

    // Assess
    await expect(refused).rejects.toThrow(reason);
    await expect(refused).rejects.toBeInstanceOf(ScaffoldRefusedError);
    expect(await snapshot(root)).toEqual(before);
  });

  it('names the item after the singular of the area, unless told', () => {
    // Assess
    expect(['reports', 'entries', 'boxes', 'addresses', 'status', 'inventory'].map(singular)).toEqual([
      'report',
      'entry',
      'box',
      'address',
      'status',
      'inventory',
    ]);
  });
});
