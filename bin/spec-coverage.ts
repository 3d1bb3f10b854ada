import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { areas, routes } from '../lib/manifest/index.ts';
import { servicesOf } from '../lib/manifest/services.ts';
import {
  checkCoverage,
  findUnspecifiedRoutes,
  formatEndpoint,
  formatRoute,
  groupBySection,
  isPlatformExtra,
  isServed,
  parseSpecEndpoints,
  statusTable,
  withStatusTable,
} from '../lib/manifest/spec-coverage.ts';

/**
 * `npm run spec:coverage`: which SPEC part 4 endpoints the manifest serves. A progress report, not
 * a gate: it exits 0 however many are missing (the unit tests guard the manifest itself).
 * `-- --markdown` prints only the per-area status table; `-- --readme` writes that table into the
 * README's status section (a unit test fails while the two differ).
 */
const specFile = fileURLToPath(new URL('../docs/SPEC.md', import.meta.url));
const readmeFile = fileURLToPath(new URL('../README.md', import.meta.url));
const mode = process.argv.includes('--readme') ? 'readme' : process.argv.includes('--markdown') ? 'markdown' : 'report';

try {
  const endpoints = parseSpecEndpoints(await readFile(specFile, 'utf8'));
  const entries = checkCoverage(
    endpoints,
    routes,
    servicesOf(areas).map((s) => s.spec),
  );
  if (mode !== 'report') {
    const table = statusTable(groupBySection(entries));
    if (mode === 'markdown') console.log(table);
    else {
      await writeFile(readmeFile, withStatusTable(await readFile(readmeFile, 'utf8'), table));
      console.log(`Wrote the status table into ${readmeFile}`);
    }
  } else {
    console.log(`SPEC part 4 endpoints (${specFile}) against lib/manifest/routes.ts\n`);
    for (const group of groupBySection(entries)) {
      console.log(`${group.section}: ${group.implemented} of ${group.entries.length}`);
      for (const entry of group.entries) {
        const by = [...entry.routes.map((r) => r.id), ...(entry.service ? [`${entry.service.id} (service)`] : [])];
        const served = by.length > 0 ? `  <- ${by.join(', ')}` : '';
        console.log(`  ${isServed(entry) ? 'implemented' : 'missing    '}  ${formatEndpoint(entry.endpoint)}${served}`);
      }
      console.log('');
    }

    const extras = routes.filter(isPlatformExtra);
    if (extras.length > 0) console.log(`Platform extras, not in the SPEC: ${extras.map(formatRoute).join(', ')}`);
    const unspecified = findUnspecifiedRoutes(endpoints, routes);
    if (unspecified.length > 0) console.log(`Routes in neither the SPEC nor the extras: ${unspecified.map(formatRoute).join(', ')}`);

    const implemented = entries.filter(isServed).length;
    console.log(`${implemented} of ${entries.length} endpoints implemented`);
  }
} catch (error) {
  const what = mode === 'readme' ? `write the status table into ${readmeFile}` : `read the SPEC endpoints from ${specFile}`;
  console.error(`Cannot ${what}: ${(error as Error).message}`);
  process.exitCode = 1;
}
