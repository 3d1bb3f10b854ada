/**
 * The infra tests' shared synth (test/support/synth-cache.ts): keyed on the inputs' bytes, so an
 * edit always makes a new entry and a touch alone never does; built once for any number of askers.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedDirectory, contentKey } from '../support/synth-cache.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project with a source directory of two files and a lone file. */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'synth-cache-'));
  dirs.push(root);
  mkdirSync(join(root, 'lib', 'nested'), { recursive: true });
  writeFileSync(join(root, 'lib', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'lib', 'nested', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(root, 'cdk.json'), '{}');
  return root;
}

const INPUTS = ['lib', 'cdk.json', 'missing.json'];

describe('contentKey', () => {
  it('changes with a byte of any input, a new file, a renamed file and the executable bit', () => {
    // Prepare
    const root = project();
    const before = contentKey(root, INPUTS);

    // Act and Assess, one change at a time, each undone before the next
    writeFileSync(join(root, 'lib', 'nested', 'b.ts'), 'export const b = 3;\n');
    expect(contentKey(root, INPUTS)).not.toBe(before);
    writeFileSync(join(root, 'lib', 'nested', 'b.ts'), 'export const b = 2;\n');
    expect(contentKey(root, INPUTS)).toBe(before);

    writeFileSync(join(root, 'lib', 'c.ts'), '');
    expect(contentKey(root, INPUTS)).not.toBe(before);
    rmSync(join(root, 'lib', 'c.ts'));

    writeFileSync(join(root, 'missing.json'), '');
    expect(contentKey(root, INPUTS)).not.toBe(before);
    rmSync(join(root, 'missing.json'));

    chmodSync(join(root, 'lib', 'a.ts'), 0o755);
    expect(contentKey(root, INPUTS)).not.toBe(before);
    chmodSync(join(root, 'lib', 'a.ts'), 0o644);

    writeFileSync(join(root, 'lib', 'nested', 'a.ts'), readFileSync(join(root, 'lib', 'a.ts')));
    rmSync(join(root, 'lib', 'a.ts'));
    expect(contentKey(root, INPUTS)).not.toBe(before);
  });

  it('keeps its value when only times change, and ignores interpreter caches', () => {
    // Prepare
    const root = project();
    const before = contentKey(root, INPUTS);

    // Act
    utimesSync(join(root, 'lib', 'a.ts'), new Date(0), new Date(0));
    mkdirSync(join(root, 'lib', '__pycache__'));
    writeFileSync(join(root, 'lib', '__pycache__', 'x.pyc'), 'compiled');
    writeFileSync(join(root, 'lib', 'y.pyc'), 'compiled');

    // Assess
    expect(contentKey(root, INPUTS)).toBe(before);
  });
});

describe('cachedDirectory', () => {
  it('builds a key once and serves the same directory after', () => {
    // Prepare
    const cache = join(project(), 'cache');
    let builds = 0;
    const build = (dir: string) => {
      builds += 1;
      writeFileSync(join(dir, 'out.txt'), 'built');
    };

    // Act
    const first = cachedDirectory(cache, 'k1', build);
    const second = cachedDirectory(cache, 'k1', build);
    const other = cachedDirectory(cache, 'k2', build);

    // Assess
    expect(first).toBe(second);
    expect(other).not.toBe(first);
    expect(builds).toBe(2);
    expect(readFileSync(join(first!, 'out.txt'), 'utf8')).toBe('built');
  });

  it('rebuilds an entry a build left unfinished, and keeps none whose inputs changed during its build', () => {
    // Prepare: a build that threw half-way, then one whose inputs changed under it
    const cache = join(project(), 'cache');
    expect(() =>
      cachedDirectory(cache, 'k', (dir) => {
        writeFileSync(join(dir, 'half.txt'), '');
        throw new Error('interrupted');
      }),
    ).toThrow('interrupted');
    const changed = cachedDirectory(
      cache,
      'k',
      (dir) => writeFileSync(join(dir, 'out.txt'), 'old sources'),
      () => false,
    );

    // Act
    const rebuilt = cachedDirectory(cache, 'k', (dir) => writeFileSync(join(dir, 'out.txt'), 'built'));

    // Assess
    expect(changed).toBeUndefined();
    expect(readdirSync(rebuilt!).sort()).toEqual(['complete', 'out.txt']);
    expect(readFileSync(join(rebuilt!, 'out.txt'), 'utf8')).toBe('built');
    expect(existsSync(join(cache, 'k.lock'))).toBe(false);
  });

  it('builds once for processes asking at the same time', async () => {
    // Prepare: three processes ask for one key; each build takes a while and counts itself
    const cache = join(project(), 'cache');
    const module = new URL('../support/synth-cache.ts', import.meta.url).pathname;
    const script = `
      import { appendFileSync, writeFileSync } from 'node:fs';
      import { join } from 'node:path';
      const { cachedDirectory } = await import(${JSON.stringify(module)});
      const dir = cachedDirectory(${JSON.stringify(cache)}, 'shared', (into) => {
        appendFileSync(${JSON.stringify(join(cache, '..', 'builds.log'))}, 'build\\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
        writeFileSync(join(into, 'out.txt'), 'built');
      });
      process.stdout.write(dir);
    `;
    const ask = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
      });

    // Act
    const answers = await Promise.all([ask(), ask(), ask()]);

    // Assess
    expect(new Set(answers)).toEqual(new Set([join(cache, 'shared')]));
    expect(readFileSync(join(cache, '..', 'builds.log'), 'utf8')).toBe('build\n');
    expect(readFileSync(join(cache, 'shared', 'out.txt'), 'utf8')).toBe('built');
  });
});
