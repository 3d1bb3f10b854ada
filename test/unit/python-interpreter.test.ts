import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeInterpreter, missingRequirementHint, probePython, PythonUnavailableError } from '../../functions/runtimes/python-interpreter.ts';

/** Other real interpreters of this machine image (pyenv, STACK-NOTES.md); tests needing one skip without it. */
const pyenv = (version: string) => `/root/.pyenv/versions/${version}/bin/python`;
const PYTHON_310 = pyenv('3.10.13');
const PYTHON_313 = pyenv('3.13.0');
const PYTHON_27 = pyenv('2.7.18');

describe('probePython', () => {
  let site: string;

  beforeAll(async () => {
    // A directory holding a package named like the framework: what `pythonPath` adds for the runtime.
    site = await mkdtemp(join(tmpdir(), 'probe-site-'));
    await mkdir(join(site, 'strands'));
    await writeFile(join(site, 'strands', '__init__.py'), '');
  });

  afterAll(async () => {
    await rm(site, { recursive: true, force: true });
  });

  it('describes python3 on PATH: its real executable, its version, no framework, no warning', async () => {
    const found = await probePython('python3');
    expect(found.executable).toMatch(/^\/.*python3/);
    expect(found.version).toMatch(/^3\.(1[1-2])\.\d+$/);
    expect(found.framework).toBe(false);
    expect(found.warning).toBeNull();
    expect(found.roots).not.toContain('/');
    expect(describeInterpreter(found)).toContain(`Python runtime: ${found.executable} (Python ${found.version}); agent framework (strands) not installed`);
  });

  it('finds the framework on the extra path the runtime gets', async () => {
    const found = await probePython('python3', { pythonPath: [site] });
    expect(found.framework).toBe(true);
    expect(describeInterpreter(found)).toMatch(/agent framework \(strands\) installed$/);
  });

  it('refuses a missing interpreter, naming what to install or set', async () => {
    const probe = probePython('/nonexistent/python3');
    await expect(probe).rejects.toBeInstanceOf(PythonUnavailableError);
    await expect(probe).rejects.toThrow(
      '/nonexistent/python3 was not found; install Python 3.11 or 3.12 (e.g. apt-get install python3.11, or pyenv install 3.12) or set PYTHON=/path/to/python3.11+',
    );
  });

  it('refuses something that is not an interpreter', async () => {
    await expect(probePython('/bin/false')).rejects.toThrow(/^\/bin\/false could not describe itself \(exit code 1\); install Python 3\.11/);
  });

  it.skipIf(!existsSync(PYTHON_310))('refuses Python 3.10: the runtime needs 3.11', async () => {
    await expect(probePython(PYTHON_310)).rejects.toThrow(`${PYTHON_310} is Python 3.10.13; the runtime needs 3.11 or newer`);
  });

  it.skipIf(!existsSync(PYTHON_27))('refuses Python 2 (it has no -I), saying what to install', async () => {
    await expect(probePython(PYTHON_27)).rejects.toThrow(
      /^\/root\/.pyenv\/versions\/2\.7\.18\/bin\/python could not describe itself \(.+\); install Python 3\.11 or 3\.12/,
    );
  });

  it.skipIf(!existsSync(PYTHON_313))('takes Python 3.13 with a warning that it is untested', async () => {
    const found = await probePython(PYTHON_313);
    expect(found.version).toBe('3.13.0');
    expect(found.warning).toBe('Python 3.13.0 is newer than the runtime is tested on (3.11–3.12)');
    expect(describeInterpreter(found)).toContain('; Python 3.13.0 is newer than the runtime is tested on');
  });
});

describe('missingRequirementHint', () => {
  it('names the interpreter for a module of the requirements, and nothing for the user’s own modules', () => {
    expect(missingRequirementHint("ModuleNotFoundError: No module named 'strands'", '/usr/bin/python3.11')).toBe(
      "strands is not installed for the runtime's Python /usr/bin/python3.11; install it with /usr/bin/python3.11 -m pip install -r layers/python/requirements.txt (or npm run setup:python)",
    );
    expect(missingRequirementHint("ModuleNotFoundError: No module named 'strands_tools.calculator'", '/p')).toContain('strands_tools is not installed');
    expect(missingRequirementHint("ModuleNotFoundError: No module named 'requests'", '/p')).toBeNull();
    expect(missingRequirementHint('ValueError: strands', '/p')).toBeNull();
  });
});
