/**
 * The README's status table is what `npm run spec:coverage -- --markdown` prints for the current
 * routes and SPEC, so the README cannot claim an area that is not served, nor miss one that is.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { areas } from '../../lib/manifest/areas.ts';
import { routes } from '../../lib/manifest/routes.ts';
import { servicesOf } from '../../lib/manifest/services.ts';
import { README_STATUS_MARKERS, checkCoverage, groupBySection, parseSpecEndpoints, statusTable, withStatusTable } from '../../lib/manifest/spec-coverage.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe("the README's status table", () => {
  it('matches the coverage of the SPEC by the routes (npm run spec:coverage -- --readme rewrites it)', async () => {
    const [readme, spec] = await Promise.all([read('README.md'), read('docs/SPEC.md')]);
    const table = statusTable(
      groupBySection(
        checkCoverage(
          parseSpecEndpoints(spec),
          routes,
          servicesOf(areas).map((s) => s.spec),
        ),
      ),
    );
    // Only the section is compared, so a failure shows the rows that differ.
    const section = (markdown: string) => markdown.slice(markdown.indexOf(README_STATUS_MARKERS.start), markdown.indexOf(README_STATUS_MARKERS.end));
    expect(section(readme), 'README.md status table is stale: run npm run spec:coverage -- --readme').toBe(section(withStatusTable(readme, table)));
  });

  it('says "not yet" for an area without routes and "partly" for one with some', () => {
    const endpoint = (section: string, path: string) => ({ section, methods: ['GET' as const], host: 'base' as const, path, line: 1 });
    const route = routes.find((r) => r.method === 'GET' && r.host === 'base')!;
    const table = statusTable(
      groupBySection([
        { endpoint: endpoint('4.1 Served', '/a'), routes: [route] },
        { endpoint: endpoint('4.2 Half', '/b'), routes: [route] },
        { endpoint: endpoint('4.2 Half', '/c'), routes: [] },
        { endpoint: endpoint('4.3 Absent', '/d'), routes: [] },
      ]),
    );
    expect(table.split('\n').slice(2)).toEqual([
      '| 4.1 Served | 1 | implemented |',
      '| 4.2 Half | 2 | partly (1 of 2) |',
      '| 4.3 Absent | 1 | not yet |',
      '| All | 4 | 2 implemented |',
    ]);
  });

  it('refuses a README without the markers rather than appending a table somewhere', () => {
    expect(() => withStatusTable('# no markers here\n', '| x |')).toThrow(/spec-coverage:start/);
  });
});
