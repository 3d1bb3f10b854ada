import { access, mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as Manifest from '../lib/manifest/index.ts';
import type * as Define from '../lib/manifest/define.ts';
import type { AreaModule } from '../lib/manifest/types.ts';

/**
 * `npm run new:area NAME` (or `npm run new:area -- NAME --item SINGULAR --root DIR`): scaffolds an
 * area the platform serves at once: its module with one route, the thin handler, the schema, the use
 * case, the store over a table the area owns (provided as a port), an integration test against the
 * local platform, and the two edits outside the folder that `npm test` needs: the module list
 * (lib/manifest/areas.ts, import and entry) and, as the area is not in SPEC part 4, a platform extra
 * for its paths (lib/manifest/spec-coverage.ts; without it the unit test listing unspecified routes
 * fails, while the README's status table, which counts SPEC endpoints only, does not change). It
 * refuses to overwrite anything.
 *
 * `--item` names the singular when dropping the plural's ending is wrong; `--root` scaffolds into
 * another copy of the repository (the unit test's temporary one).
 */

/** Lowercase words of letters and digits joined by hyphens; it becomes a folder, a table, a path segment and (in camelCase) an export. */
export const AREA_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
/** Tables need 3 characters (dynalite); longer names make unreadable function and table names in the cloud. */
const NAME_LENGTH = { min: 3, max: 30 } as const;

const DEFAULT_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A request the scaffold will not carry out (bad name, taken name, existing file): nothing was written. */
export class ScaffoldRefusedError extends Error {}

export interface NewAreaOptions {
  readonly name: string;
  /** The singular the route, files and types are named after; from `name` unless given (`reports` -> `report`). */
  readonly item?: string | undefined;
  /** Repository to scaffold into. */
  readonly root?: string | undefined;
}

export interface ScaffoldResult {
  /** Paths relative to the root, in the order written. */
  readonly created: readonly string[];
  readonly edited: readonly { readonly path: string; readonly what: string }[];
  readonly routePath: string;
  readonly testPath: string;
}

interface Names {
  readonly area: string;
  /** The module's export prefix and the port's name. */
  readonly areaCamel: string;
  readonly item: string;
  readonly itemCamel: string;
  readonly itemPascal: string;
  readonly idParam: string;
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** `daily-reports` -> `daily reports`, for comments and messages. */
const words = (name: string) => name.replace(/-/g, ' ');
const pascal = (name: string) => camel(name).replace(/^[a-z]/, (c) => c.toUpperCase());

/** English plurals the common way (`reports`, `entries`, `boxes`); anything else is kept, and `--item` says otherwise. */
export function singular(name: string): string {
  if (/[^aeiou]ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ch|sh|ss|x|z)es$/.test(name)) return name.replace(/es$/, '');
  if (/[^su]s$/.test(name)) return name.replace(/s$/, '');
  return name;
}

function namesOf(name: string, item: string | undefined): Names {
  if (!AREA_NAME.test(name) || name.length < NAME_LENGTH.min || name.length > NAME_LENGTH.max) {
    throw new ScaffoldRefusedError(
      `"${name}" is not an area name: use ${NAME_LENGTH.min} to ${NAME_LENGTH.max} lowercase letters, digits and single hyphens, starting with a letter (e.g. daily-reports).`,
    );
  }
  const one = item ?? singular(name);
  if (!AREA_NAME.test(one))
    throw new ScaffoldRefusedError(`"${one}" is not an item name: lowercase letters, digits and single hyphens, starting with a letter.`);
  return { area: name, areaCamel: camel(name), item: one, itemCamel: camel(one), itemPascal: pascal(one), idParam: `${camel(one)}Id` };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Where the area's module and route handler go, relative to the root (`areaModuleImport`, `handlerModulePath`). */
function paths(n: Names) {
  return { module: `functions/${n.area}/${n.area}.module.ts`, handler: `functions/${n.area}/handlers/get-${n.item}.handler.ts` };
}

/** The files of the area, by path relative to the root. */
function areaFiles(n: Names): Map<string, string> {
  const folder = `functions/${n.area}`;
  return new Map([
    [paths(n).module, moduleSource(n)],
    [`${folder}/${n.item}.schema.ts`, schemaSource(n)],
    [`${folder}/${n.item}.store.ts`, storeSource(n)],
    [`${folder}/${n.item}.service.ts`, serviceSource(n)],
    [paths(n).handler, handlerSource(n)],
    [`test/integration/${n.area}.test.ts`, testSource(n)],
  ]);
}

const AREAS_FILE = 'lib/manifest/areas.ts';
const SPEC_COVERAGE_FILE = 'lib/manifest/spec-coverage.ts';

/** The module list with the area's import after the last area import, and its entry last in the list. */
function withAreaListed(source: string, n: Names): string {
  const importLine = `import { ${n.areaCamel}Area } from '../../functions/${n.area}/${n.area}.module.ts';`;
  const imports = [...source.matchAll(/^import \{ \w+Area \} from '\.\.\/\.\.\/functions\/[^']+\.module\.ts';$/gm)];
  const lastImport = imports.at(-1);
  const list = /^export const areas = \[\n[\s\S]*?\n(?=\] as const;$)/m.exec(source);
  if (lastImport === undefined || list === null) {
    throw new ScaffoldRefusedError(
      `Cannot add the area to the module list: ${AREAS_FILE} no longer has the area imports or the \`export const areas = [ ... ] as const;\` list this script edits.`,
    );
  }
  const afterImport = lastImport.index + lastImport[0].length;
  const listEnd = list.index + list[0].length;
  return `${source.slice(0, afterImport)}\n${importLine}${source.slice(afterImport, listEnd)}  ${n.areaCamel}Area,\n${source.slice(listEnd)}`;
}

/** The coverage rules with the area's paths as a platform extra, the last entry of `PLATFORM_EXTRAS`. */
function withPlatformExtra(source: string, n: Names): string {
  const start = source.indexOf('const PLATFORM_EXTRAS');
  const end = start < 0 ? -1 : source.indexOf('\n];', start);
  if (end < 0)
    throw new ScaffoldRefusedError(`Cannot record the area's paths as platform extras: ${SPEC_COVERAGE_FILE} has no PLATFORM_EXTRAS list ending in "];".`);
  const entry = [
    `  // The ${n.area} area (npm run new:area): not in SPEC part 4. Specify it there and drop this entry, or keep it as an extra on purpose.`,
    `  { host: 'base', path: '/${n.area}/', prefix: true },`,
  ].join('\n');
  return `${source.slice(0, end)}\n${entry}${source.slice(end)}`;
}

/** Refuses a name the platform already uses for an area, a table, a port or a path, before anything is written. */
async function checkNameIsFree(root: string, n: Names, files: ReadonlyMap<string, string>, routePath: string): Promise<void> {
  if (await exists(join(root, 'functions', n.area))) throw new ScaffoldRefusedError(`functions/${n.area} exists already: choose another name.`);
  for (const path of files.keys()) if (await exists(join(root, path))) throw new ScaffoldRefusedError(`${path} exists already: nothing was written.`);

  let manifest: typeof Manifest;
  let define: typeof Define;
  try {
    manifest = (await import(pathToFileURL(join(root, 'lib/manifest/index.ts')).href)) as typeof Manifest;
    define = (await import(pathToFileURL(join(root, 'lib/manifest/define.ts')).href)) as typeof Define;
  } catch (error) {
    throw new ScaffoldRefusedError(`Cannot load the module list (lib/manifest/index.ts) to check the name against it: ${(error as Error).message}`);
  }
  const taken = [
    manifest.areas.some((a) => a.name === n.area) && `an area named ${n.area}`,
    manifest.tables.some((t) => t.name === n.area) && `a table named ${n.area}`,
    manifest.routes.some((r) => r.path.split('/')[1] === n.area) && `routes under /${n.area}/`,
  ].filter((what) => what !== false);
  if (taken.length > 0) throw new ScaffoldRefusedError(`The platform has ${taken.join(' and ')} already: choose another name.`);
  // The module as it will be written, so a port name the kernel or another area owns is refused now, in checkAreas' words.
  const candidate = define.defineArea({
    name: n.area,
    routes: [{ method: 'GET', path: routePath, handler: `get-${n.item}`, auth: 'required', callers: 'role' }],
    tables: [{ name: n.area, partitionKey: 'userId', sortKey: n.idParam }],
    provides: { [n.areaCamel]: define.providePort({ tables: [n.area] }, () => ({})) },
  });
  try {
    manifest.checkAreas([...manifest.areas, candidate]);
  } catch (error) {
    throw new ScaffoldRefusedError(`The area would not start: ${(error as Error).message}`);
  }
}

/**
 * Writes the area, its test and the two edits, then imports what it wrote and checks the module
 * list with it; if any of that fails, removes what it wrote and puts the two files back.
 */
export async function scaffoldArea(options: NewAreaOptions): Promise<ScaffoldResult> {
  const root = resolve(options.root ?? DEFAULT_ROOT);
  const n = namesOf(options.name, options.item);
  const files = areaFiles(n);
  const routePath = `/${n.area}/{${n.idParam}}`;
  await checkNameIsFree(root, n, files, routePath);

  const areasBefore = await readFile(join(root, AREAS_FILE), 'utf8');
  const coverageBefore = await readFile(join(root, SPEC_COVERAGE_FILE), 'utf8');
  if (areasBefore.includes(`${n.areaCamel}Area`)) throw new ScaffoldRefusedError(`${AREAS_FILE} already names ${n.areaCamel}Area: nothing was written.`);
  if (coverageBefore.includes(`path: '/${n.area}/'`))
    throw new ScaffoldRefusedError(`${SPEC_COVERAGE_FILE} already has an extra for /${n.area}/: nothing was written.`);
  const areasAfter = withAreaListed(areasBefore, n);
  const coverageAfter = withPlatformExtra(coverageBefore, n);

  const created: string[] = [];
  const madeDirs: string[] = [];
  const edited: { path: string; what: string; before: string; after: string }[] = [];
  try {
    for (const [path, source] of files) {
      const dir = dirname(join(root, path));
      const first = await mkdir(dir, { recursive: true });
      if (first !== undefined) madeDirs.push(first);
      // `wx`: a file that appeared since the check above is left alone.
      await writeFile(join(root, path), await formatted(root, path, source), { flag: 'wx' });
      created.push(path);
    }
    for (const [path, before, after, what] of [
      [AREAS_FILE, areasBefore, areasAfter, `import and list entry ${n.areaCamel}Area`],
      [SPEC_COVERAGE_FILE, coverageBefore, coverageAfter, `platform extra /${n.area}/ (the area is not in SPEC part 4)`],
    ] as const) {
      if ((await readFile(join(root, path), 'utf8')) !== before) throw new ScaffoldRefusedError(`${path} changed while scaffolding: run again.`);
      await writeFile(join(root, path), after);
      edited.push({ path, what, before, after });
    }
    await checkWritten(root, n);
  } catch (error) {
    for (const e of edited.reverse()) if ((await readFile(join(root, e.path), 'utf8')) === e.after) await writeFile(join(root, e.path), e.before);
    for (const path of created) await rm(join(root, path), { force: true });
    // Only the directories this run made, deepest first, and only if still empty.
    for (const dir of madeDirs.reverse()) await removeEmptyTree(dir);
    throw error;
  }
  return { created, edited: edited.map(({ path, what }) => ({ path, what })), routePath, testPath: `test/integration/${n.area}.test.ts` };
}

/** The source as `npm run lint` wants it (long names make long lines), with the root's Prettier settings. */
async function formatted(root: string, path: string, source: string): Promise<string> {
  const prettier = await import('prettier');
  const filepath = join(root, path);
  return prettier.format(source, { ...(await prettier.resolveConfig(filepath)), filepath });
}

/** Removes `dir` and the empty directories below it; anything holding a file stays. */
async function removeEmptyTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) if (entry.isDirectory()) await removeEmptyTree(join(dir, entry.name));
  await rmdir(dir).catch(() => undefined);
}

/** Imports the written module and handler, so a template that does not load fails here, not in the developer's first test. */
async function checkWritten(root: string, n: Names): Promise<void> {
  const { module: modulePath, handler: handlerPath } = paths(n);
  const manifest = (await import(pathToFileURL(join(root, 'lib/manifest/index.ts')).href)) as typeof Manifest;
  const written = (await import(pathToFileURL(join(root, modulePath)).href)) as Record<string, AreaModule | undefined>;
  const area = written[`${n.areaCamel}Area`];
  if (area === undefined) throw new Error(`${modulePath} does not export ${n.areaCamel}Area`);
  manifest.checkAreas([...manifest.areas.filter((a) => a.name !== n.area), area]);
  const handler = (await import(pathToFileURL(join(root, handlerPath)).href)) as { default?: { kind?: string } };
  if (handler.default?.kind !== 'buffered') throw new Error(`${handlerPath} does not export a route definition`);
}

// --- The files. Generated code follows the house layout: thin handler, use case taking ports, store with the DynamoDB details.

function moduleSource(n: Names): string {
  return `import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { create${n.itemPascal}Store } from './${n.item}.store.ts';

/**
 * The ${n.area} area: each user's ${words(n.area)}, read by their owner. (Scaffolded by \`npm run new:area\`;
 * say here what the area is for and which SPEC section it serves.)
 */
export const ${n.areaCamel}Area = defineArea({
  name: '${n.area}',
  routes: [{ method: 'GET', path: '/${n.area}/{${n.idParam}}', handler: 'get-${n.item}', auth: 'required', callers: 'role' }],
  // One partition per owner: a user's ${words(n.area)} are one Query, and another user's id finds nothing.
  tables: [{ name: '${n.area}', partitionKey: 'userId', sortKey: '${n.idParam}' }],
  provides: {
    ${n.areaCamel}: providePort({ tables: ['${n.area}'] }, ({ db, clock }) => create${n.itemPascal}Store(db, clock)),
  },
});
`;
}

function schemaSource(n: Names): string {
  return `import * as z from 'zod';

/** The store makes ids (\`sortableId\`): a prefix, then base62. */
export const ${n.itemCamel}IdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a ${words(n.item)} id');

export const get${n.itemPascal}Params = z.object({ ${n.idParam}: ${n.itemCamel}IdSchema });

/** One ${words(n.item)}, kept under its owner and its id. */
export interface ${n.itemPascal}Record {
  readonly userId: string;
  readonly ${n.idParam}: string;
  readonly title: string;
  readonly createdAt: number;
}
`;
}

function storeSource(n: Names): string {
  return `import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../core/clock.ts';
import { readItem, type Db } from '../core/db/dynamo.ts';
import { sortableId } from '../core/ids.ts';
import type { ${n.itemPascal}Record } from './${n.item}.schema.ts';

/** The ${words(n.area)} (table \`${n.area}\`), keyed by owner and id. */
export interface ${n.itemPascal}Store {
  create(userId: string, fields: { readonly title: string }): Promise<${n.itemPascal}Record>;
  get(userId: string, ${n.idParam}: string): Promise<${n.itemPascal}Record | null>;
}

export function create${n.itemPascal}Store(db: Db, clock: Clock): ${n.itemPascal}Store {
  const table = db.table('${n.area}');
  return {
    async create(userId, fields) {
      const now = clock.now();
      const record: ${n.itemPascal}Record = { userId, ${n.idParam}: sortableId('${n.item}-', now), title: fields.title, createdAt: now };
      // Ids are random enough never to meet; the condition makes sure a record is never replaced if one did.
      await db.doc.send(new PutCommand({ TableName: table, Item: record, ConditionExpression: 'attribute_not_exists(userId)' }));
      return record;
    },
    get: (userId, ${n.idParam}) => readItem(db, { table, key: { userId, ${n.idParam} }, as: (item) => item as unknown as ${n.itemPascal}Record }),
  };
}
`;
}

function serviceSource(n: Names): string {
  return `import { requireUser, type Actor } from '../core/auth/actor.ts';
import { NotFoundError } from '../core/errors.ts';
import type { ${n.itemPascal}Record } from './${n.item}.schema.ts';
import type { ${n.itemPascal}Store } from './${n.item}.store.ts';

export interface ${n.itemPascal}Ports {
  readonly ${n.areaCamel}: ${n.itemPascal}Store;
}

/** \`GET /${n.area}/{${n.idParam}}\`: the caller's own ${words(n.item)}. Another user's answers 404 like a missing one, so ids reveal nothing. */
export async function get${n.itemPascal}(actor: Actor, ${n.idParam}: string, ports: ${n.itemPascal}Ports): Promise<${n.itemPascal}Record> {
  const found = await ports.${n.areaCamel}.get(requireUser(actor).userId, ${n.idParam});
  if (found === null) throw new NotFoundError(\`No ${words(n.item)} \${${n.idParam}}.\`);
  return found;
}
`;
}

function handlerSource(n: Names): string {
  return `import { defineRoute } from '../../core/http/route.ts';
import { get${n.itemPascal}Params } from '../${n.item}.schema.ts';
import { get${n.itemPascal} } from '../${n.item}.service.ts';

export default defineRoute({
  params: get${n.itemPascal}Params,
  run: ({ actor, params, ports }) => get${n.itemPascal}(actor, params.${n.idParam}, ports),
});
`;
}

function testSource(n: Names): string {
  const url = `\`/${n.area}/\${stored.${n.idParam}}\``;
  return `/**
 * The ${n.area} area on the real local platform: its route answers the caller's own ${n.item}, stored
 * through the port the area provides; another user's id is 404, a malformed one 400, no credential 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('the ${n.area} area', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.stop({ removeData: true }));

  it("answers GET /${n.area}/{${n.idParam}} with the caller's own ${n.item} only", async () => {
    // Prepare: a ${n.item} stored through the area's port, as a route that creates one would
    const owner = await createUser(platform);
    const stranger = await createUser(platform);
    const stored = await platform.running.ports.${n.areaCamel}.create(owner.userId, { title: 'first' });

    // Act
    const own = await platform.api('GET', ${url}, { token: owner.token });
    const others = await platform.api('GET', ${url}, { token: stranger.token });
    const malformed = await platform.api('GET', '/${n.area}/not.an.id', { token: owner.token });
    const anonymous = await platform.api('GET', ${url});

    // Assess
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toEqual(stored);
    expect(others.status, others.text).toBe(404);
    expect(malformed.status, malformed.text).toBe(400);
    expect(anonymous.status, anonymous.text).toBe(401);
  });
});
`;
}

function report(result: ScaffoldResult, root: string, name: string): string {
  // Relative to where it was run from, unless that is outside the root (`--root`).
  const shown = (path: string) => (relative(process.cwd(), root).startsWith('..') ? join(root, path) : relative(process.cwd(), join(root, path)));
  return [
    `Scaffolded the ${name} area (GET ${result.routePath}).`,
    'Wrote:',
    ...result.created.map((path) => `  ${shown(path)}`),
    'Edited:',
    ...result.edited.map((e) => `  ${shown(e.path)}: ${e.what}`),
    '',
    'Next:',
    `  1. npx vitest run ${shown(result.testPath)}    (the area's test against the local platform)`,
    '  2. npx tsc --noEmit -p tsconfig.json',
    `  3. Say in the module what the area is for; add routes as lines in its module with a handler each (docs/development.md, "How to add an area").`,
    `  4. Specify the area in docs/SPEC.md part 4 and drop its entry from PLATFORM_EXTRAS in ${SPEC_COVERAGE_FILE},`,
    '     then npm run spec:coverage -- --readme (the README status table); or keep the extra on purpose.',
  ].join('\n');
}

async function main(): Promise<void> {
  const usage =
    'Usage: npm run new:area NAME, or npm run new:area -- NAME [--item SINGULAR] [--root DIR]   (NAME: lowercase words joined by hyphens, e.g. daily-reports)';
  let args;
  try {
    args = parseArgs({ allowPositionals: true, options: { item: { type: 'string' }, root: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exitCode = 2;
    return;
  }
  const [name, ...rest] = args.positionals;
  if (args.values.help || name === undefined || rest.length > 0) {
    (args.values.help ? console.log : console.error)(usage);
    process.exitCode = args.values.help ? 0 : 2;
    return;
  }
  const root = resolve(args.values.root ?? DEFAULT_ROOT);
  try {
    console.log(report(await scaffoldArea({ name, item: args.values.item, root }), root, name));
  } catch (error) {
    console.error(error instanceof ScaffoldRefusedError ? `Refused: ${error.message}` : `Failed; what it wrote is removed: ${(error as Error).stack}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
