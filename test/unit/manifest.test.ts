import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buckets, handlerModulePath, routes, tables } from '../../lib/manifest/index.ts';
import { formatRoute, normaliseTemplate } from '../../lib/manifest/spec-coverage.ts';
import type { TableSpec } from '../../lib/manifest/types.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** DynamoDB attribute names the platform uses: camelCase identifiers, which need no expression aliases. */
const ATTRIBUTE = /^[A-Za-z][A-Za-z0-9]*$/;

function duplicatesOf(values: readonly string[]): string[] {
  return values.filter((value, index) => values.indexOf(value) !== index);
}

/** Every attribute a table is keyed by, in its base table or an index. */
function keyAttributesOf(table: TableSpec): string[] {
  const keys = [table.partitionKey, table.sortKey];
  for (const index of table.indexes ?? []) keys.push(index.partitionKey, index.sortKey);
  return keys.filter((key): key is string => key !== undefined);
}

describe('manifest routes', () => {
  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s has a handler module exporting a route definition of its mode',
    async (_label, route) => {
      // Prepare
      const file = repoRoot + handlerModulePath(route);
      expect(existsSync(file), `${handlerModulePath(route)} is missing`).toBe(true);
      // Act
      const module = (await import(pathToFileURL(file).href)) as { default?: { kind?: unknown; run?: unknown } };
      // Assess: defineRoute gives kind `buffered`, a streaming route's definition kind `streaming`, as the manifest's mode says.
      expect(module.default?.kind, `${handlerModulePath(route)} must export default a ${route.mode} route definition`).toBe(route.mode);
      expect(typeof module.default?.run).toBe('function');
    },
  );

  it('have unique ids, except one handler serving several methods of one path', () => {
    // Prepare: an id keys the handler definition in a cloud function's entry, so routes may share one
    // only when they are the same handler at the same address (POST and PUT /user/alias).
    const first = new Map<string, (typeof routes)[number]>();
    const clashes: string[] = [];
    // Act
    for (const route of routes) {
      const seen = first.get(route.id);
      if (seen === undefined) first.set(route.id, route);
      else if (seen.method === route.method || seen.host !== route.host || seen.path !== route.path || seen.mode !== route.mode) {
        clashes.push(`${route.id}: ${formatRoute(seen)} and ${formatRoute(route)}`);
      }
    }
    // Assess
    expect(clashes).toEqual([]);
  });

  it('have no two routes for one method, host and path template', () => {
    // Assess: parameter names erased, since `/x/{a}` and `/x/{b}` are the same route to a router.
    expect(duplicatesOf(routes.map((r) => `${r.method} ${r.host} ${normaliseTemplate(r.path)}`))).toEqual([]);
  });

  it('have well-formed path templates', () => {
    for (const route of routes) {
      // Assess: a leading slash, no empty or trailing segments, parameters as whole `{name}` segments,
      // and at most a last `{name+}` (the rest of the path).
      expect(route.path, formatRoute(route)).toMatch(
        /^\/(?:[\w.-]+|\{[A-Za-z]\w*\})(?:\/(?:[\w.-]+|\{[A-Za-z]\w*\}))*(?:\/\{[A-Za-z]\w*\+\})?$|^\/(?:\{[A-Za-z]\w*\+\})?$/,
      );
    }
  });

  it('name path parameters at one position alike (API Gateway and the local router refuse siblings)', () => {
    // Prepare
    const paramAt = new Map<string, string>();
    const conflicts: string[] = [];
    // Act
    for (const route of routes) {
      const segments = route.path.split('/').filter((s) => s.length > 0);
      segments.forEach((segment, index) => {
        const name = /^\{(\w+)\}$/.exec(segment)?.[1];
        if (name === undefined) return;
        const parent = `${route.host} /${segments.slice(0, index).join('/')}`;
        const known = paramAt.get(parent);
        if (known !== undefined && known !== name) conflicts.push(`${formatRoute(route)}: {${name}} where another route has {${known}}`);
        paramAt.set(parent, known ?? name);
      });
    }
    // Assess
    expect(conflicts).toEqual([]);
  });

  it('have positive timeouts and body limits', () => {
    for (const route of routes) {
      expect(route.timeoutSec, route.id).toBeGreaterThan(0);
      expect(route.maxBodyBytes, route.id).toBeGreaterThan(0);
    }
  });
});

describe('manifest tables', () => {
  it('have unique names of at least 3 characters (dynalite refuses shorter ones)', () => {
    // Assess
    expect(duplicatesOf(tables.map((t) => t.name))).toEqual([]);
    for (const table of tables) expect(table.name).toMatch(/^[a-zA-Z0-9_.-]{3,}$/);
  });

  it.each(tables.map((t) => [t.name, t as TableSpec] as const))('%s has well-formed keys, indexes, TTL and number keys', (_name, table) => {
    // Prepare
    const keys = keyAttributesOf(table);
    const indexes = table.indexes ?? [];
    // Assess
    for (const key of keys) expect(key).toMatch(ATTRIBUTE);
    expect(table.sortKey).not.toBe(table.partitionKey);
    expect(duplicatesOf(indexes.map((i) => i.name))).toEqual([]);
    for (const index of indexes) {
      expect(index.name).toMatch(/^[a-zA-Z0-9_.-]{3,255}$/);
      expect(index.sortKey).not.toBe(index.partitionKey);
    }
    // A number key that keys nothing would be declared with no effect, most likely a typo.
    for (const numberKey of table.numberKeys ?? []) expect(keys, `numberKeys ${numberKey}`).toContain(numberKey);
    expect(duplicatesOf([...(table.numberKeys ?? [])])).toEqual([]);
    if (table.ttlAttribute !== undefined) {
      expect(table.ttlAttribute).toMatch(ATTRIBUTE);
      // DynamoDB expires items by a plain epoch-seconds attribute; a key attribute would be a mistake.
      expect(keys).not.toContain(table.ttlAttribute);
    }
  });
});

describe('manifest buckets', () => {
  it('have unique names that are valid inside an S3 bucket name', () => {
    // Assess
    expect(duplicatesOf(buckets.map((b) => b.name))).toEqual([]);
    for (const bucket of buckets) expect(bucket.name).toMatch(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
  });
});
