/**
 * The OpenAPI document through linters nobody here wrote (issue 38): Redocly's and Spectral's
 * recommended rules report no error, and the committed client (clients/typescript) is what
 * `npm run client:generate` writes from the routes today.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientDocument, documentText, DOCUMENT_FILE, TYPES_FILE, typesText } from '../../lib/docs/openapi-client.ts';

const run = promisify(execFile);
const bin = (name: string) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

describe('the OpenAPI document by third-party linters', () => {
  let dir: string;
  let file: string;
  let text: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    file = join(dir, 'openapi.json');
    text = documentText(await clientDocument());
    await writeFile(file, text);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('has no error for Redocly (recommended rules)', { timeout: 180_000 }, async () => {
    // Act: exit code 1 on errors; warnings are printed but pass
    const { stdout, stderr } = await run(bin('redocly'), ['lint', file, '--format=json'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    // Assess
    const report = JSON.parse(stdout) as { totals: { errors: number }; problems: { ruleId: string; message: string; severity: string }[] };
    expect(
      report.problems.filter((p) => p.severity === 'error'),
      stderr,
    ).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('has no error for Spectral (spectral:oas)', { timeout: 180_000 }, async () => {
    // Prepare
    await writeFile(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
    // Act
    const { stdout } = await run(bin('spectral'), ['lint', file, '--ruleset', join(dir, '.spectral.yaml'), '-f', 'json', '--fail-severity', 'error'], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout: string }) => error);
    // Assess: severity 0 is an error
    const results = JSON.parse(stdout.slice(stdout.indexOf('['))) as { code: string; severity: number; path: string[] }[];
    expect(results.filter((r) => r.severity === 0)).toEqual([]);
  });

  it('is what clients/typescript holds: openapi.json and its generated types are up to date (npm run client:generate)', { timeout: 120_000 }, async () => {
    // Act
    const committed = await readFile(DOCUMENT_FILE, 'utf8');
    const types = await readFile(TYPES_FILE, 'utf8');
    // Assess
    expect(committed === text, 'run `npm run client:generate`').toBe(true);
    expect(types === (await typesText(JSON.parse(text))), 'run `npm run client:generate`').toBe(true);
  });
});
