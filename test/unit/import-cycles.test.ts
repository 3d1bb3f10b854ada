/**
 * No import cycles, type imports counted (issue #32): the areas import the kernel and the manifest
 * lists the areas, so nothing the kernel imports may lead back to an area or to the list. The
 * kernel's types still follow the list, through functions/core/area-list.ts, which areas.ts fills
 * in by declaration merging; the type checks below fail if that link is lost or loosened.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BucketName, TableName } from '../../functions/core/area-list.ts';
import { parseConfig } from '../../functions/core/config.ts';
import type { RouteContext } from '../../functions/core/http/route.ts';
import type { KnowledgeStore } from '../../functions/knowledge/knowledge.store.ts';
import { areas } from '../../lib/manifest/areas.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** What `npx madge --circular functions lib bin` reads (issue #32's measure), plus the MCP host's `.mjs`. */
const SCANNED = ['functions', 'lib', 'bin'];
const SOURCE = /\.(?:ts|mts|mjs|js)$/;

/**
 * Each file's relative imports, as files of `files`: static, `import type`, `export ... from`,
 * dynamic `import()` and `declare module` alike, as madge counts them with type imports on.
 */
function importGraph(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const targets = importedFiles
      .map((ref) => ref.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolve(dirname(file), spec))
      .map((path) => [path, path.replace(/\.js$/, '.ts'), `${path}.ts`, join(path, 'index.ts')].find((candidate) => files.has(candidate)))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One import cycle per strongly connected group of files (Tarjan), as a path that returns to its start. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group = new Set<string>();
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.add(member);
    } while (member !== file);
    if (group.size > 1 || graph.get(file)?.includes(file)) cycles.push(cycleThrough(file, group, graph));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** The shortest import path from `start` back to itself within `group` (breadth first). */
function cycleThrough(start: string, group: ReadonlySet<string>, graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (const file of queue) {
    for (const next of graph.get(file) ?? []) {
      if (!group.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      if (next === start) {
        const between: string[] = [];
        for (let at = file; at !== start; at = cameFrom.get(at)!) between.unshift(at);
        return [start, ...between, start];
      }
      queue.push(next);
    }
  }
  return [start, start];
}

function sourcesUnder(folders: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of folders) {
    const root = join(repoRoot, folder);
    if (!existsSync(root)) continue;
    for (const name of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (!SOURCE.test(name) || name.endsWith('.d.ts') || name.split(/[\\/]/).includes('node_modules')) continue;
      files.set(join(root, name), readFileSync(join(root, name), 'utf8'));
    }
  }
  return files;
}

describe('import cycles', () => {
  it('finds a cycle made of type imports only', () => {
    // Prepare
    const files = new Map([
      ['/x/kernel.ts', "import type { Area } from './area.ts';\nexport type Kernel = { area: Area };\n"],
      ['/x/area.ts', "import type { Kernel } from './kernel.ts';\nexport type Area = { kernel: Kernel };\n"],
      ['/x/list.ts', "import { area } from './area.ts';\n"],
    ]);

    // Act
    const cycles = importCycles(importGraph(files));

    // Assess
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(3);
    expect(new Set(cycles[0])).toEqual(new Set(['/x/kernel.ts', '/x/area.ts']));
  });

  it('finds none between the kernel, the manifest and the areas (functions, lib, bin)', () => {
    // Prepare
    const files = sourcesUnder(SCANNED);

    // Act
    const cycles = importCycles(importGraph(files));

    // Assess
    expect(files.size).toBeGreaterThan(300);
    expect(
      cycles.map((cycle) => cycle.map((file) => relative(repoRoot, file)).join(' > ')),
      'import cycles: the kernel reads the area list through functions/core/area-list.ts, never by importing it',
    ).toEqual([]);
  });
});

describe("the kernel's types follow the area list without importing it", () => {
  it('gives a config with every listed area setting', () => {
    // Prepare
    const env = { TABLE_PREFIX: 'test-', BUCKET_PREFIX: 'test-' };

    // Act
    const config = parseConfig(env, areas);

    // Assess: a setting of the knowledge area, typed as its module's schema says (checked by tsc).
    expectTypeOf(config.KNOWLEDGE_QUOTA_MB).toEqualTypeOf<number>();
    expect(config.KNOWLEDGE_QUOTA_MB).toBe(100);
  });

  it("types a handler's ports and settings, and refuses unknown ones (checked by tsc)", () => {
    // Prepare: a handler's view of the ports, as `defineRoute` gives it.
    const handlerTypes = (ports: RouteContext<unknown, unknown, unknown>['ports']): void => {
      expectTypeOf(ports.config.KNOWLEDGE_QUOTA_MB).toEqualTypeOf<number>();
      expectTypeOf(ports.config.TABLE_PREFIX).toEqualTypeOf<string>();
      expectTypeOf(ports.knowledgeStore).toEqualTypeOf<KnowledgeStore>();
      // @ts-expect-error: no area declares this setting
      void ports.config.NO_SUCH_SETTING;
      // @ts-expect-error: no area provides this port
      void ports.noSuchPort;
      // @ts-expect-error: settings are read-only
      ports.config.KNOWLEDGE_QUOTA_MB = 1;
    };
    const tableNames: TableName[] = ['agents', 'knowledge-files'];
    const bucketNames: BucketName[] = ['blobs', 'knowledge'];
    // @ts-expect-error: no area owns this table
    const unknownTable: TableName = 'no-such-table';
    // @ts-expect-error: no area owns this bucket
    const unknownBucket: BucketName = 'no-such-bucket';

    // Act
    const listed = new Set(areas.flatMap((area) => [...area.tables.map((t) => t.name), ...area.buckets.map((b) => b.name)]));

    // Assess: the literal names above are the list's own, and the type checks compile.
    expect(typeof handlerTypes).toBe('function');
    expect([...tableNames, ...bucketNames].filter((name) => !listed.has(name))).toEqual([]);
    expect(listed.has(unknownTable) || listed.has(unknownBucket)).toBe(false);
  });
});
