import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run setup:python` as a user runs it. PyPI is out of reach here: its refusals and failures
 * are tested against nothing, and what it installs against a directory of stand-in wheels (pip's
 * own --find-links, set through PIP_FIND_LINKS) named and shaped like the real distributions.
 */
function setup(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/setup-python.ts', ...args], {
    cwd: new URL('../..', import.meta.url),
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('npm run setup:python', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setup-python-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('shows its usage with --help', () => {
    const result = setup(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: npm run setup:python');
  });

  it('refuses an unknown option with its usage', () => {
    const result = setup(['--pyton', 'python3']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Unknown option '--pyton'");
    expect(result.stderr).toContain('Usage: npm run setup:python');
  });

  it('refuses an interpreter that does not exist, saying what to install, and creates nothing', () => {
    const venv = join(dir, 'missing');
    const result = setup(['--python', '/nonexistent/python3.12', '--venv', venv]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Cannot set up Python: /nonexistent/python3.12 was not found; install Python 3.11 or 3.12 (e.g. apt-get install python3.11, or pyenv install 3.12) or set PYTHON=/path/to/python3.11+',
    );
    expect(existsSync(venv)).toBe(false);
  });

  it('takes the interpreter from PYTHON when --python is not given', () => {
    const result = setup(['--venv', join(dir, 'from-env')], { PYTHON: '/nonexistent/from-env' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nonexistent/from-env was not found');
  });

  it('says pip needs the package index when it cannot be reached', async () => {
    // An index on a loopback port nobody listens on: pip fails at once, as it would offline.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const venv = join(dir, 'offline');
    const result = setup(['--python', 'python3', '--venv', venv], {
      PIP_INDEX_URL: `http://127.0.0.1:${port}/simple`,
      PIP_RETRIES: '0',
      PIP_TIMEOUT: '2',
      PIP_NO_CACHE_DIR: '1',
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Using \/\S+ \(Python 3\.\d+\.\d+\)$/m);
    expect(existsSync(join(venv, 'bin', 'python'))).toBe(true);
    expect(result.stderr).toContain(
      'pip could not install the requirements: this needs access to the Python package index (pypi.org) or a mirror set in PIP_INDEX_URL (exit code 1)',
    );
  }, 120_000);

  it('refuses an unknown model provider, listing the known ones, and creates nothing', () => {
    // Prepare
    const venv = join(dir, 'unknown-provider');
    // Act
    const result = setup(['--python', 'python3', '--venv', venv, '--providers', 'openai,cohere']);
    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Unknown model provider cohere: --providers takes bedrock, openai, anthropic, gemini, ollama, llamacpp, litellm, mistral, writer, llamaapi',
    );
    expect(existsSync(venv)).toBe(false);
  });

  it("installs the providers' Strands extras with the requirements", () => {
    // Prepare: wheels for the requirements and for the providers' client libraries; strands-agents
    // declares its extras as the real one does (openai -> openai, ollama -> ollama, ...).
    const wheels = join(dir, 'wheels');
    const built = spawnSync('python3', ['-c', WHEEL_BUILDER, wheels], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const venv = join(dir, 'providers');
    // Act
    const result = setup(['--python', 'python3', '--venv', venv, '--providers', 'openai, anthropic,ollama'], {
      PIP_NO_INDEX: '1',
      PIP_FIND_LINKS: wheels,
      PIP_NO_CACHE_DIR: '1',
    });
    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'and strands-agents[openai] strands-agents[anthropic] strands-agents[ollama] for openai, anthropic, ollama (needs the Python package index, or PIP_INDEX_URL)',
    );
    const site = join(
      venv,
      'lib',
      readdirSync(join(venv, 'lib')).find((name) => name.startsWith('python'))!,
      'site-packages',
    );
    const installed = readdirSync(site)
      .filter((name) => name.endsWith('.dist-info'))
      .map((name) => name.replace(/-[^-]+\.dist-info$/, ''));
    expect(installed).toEqual(expect.arrayContaining(['strands_agents', 'strands_agents_tools', 'boto3', 'botocore', 'openai', 'anthropic', 'ollama']));
    // Only the providers asked for: Gemini's library stays out.
    expect(installed).not.toContain('google_genai');
  }, 120_000);
});

/** Writes minimal wheels of the requirements' distributions and the providers' libraries into argv[1]. */
const WHEEL_BUILDER = `
import base64, hashlib, os, sys, zipfile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
EXTRAS = {"openai": "openai", "anthropic": "anthropic", "ollama": "ollama", "gemini": "google-genai"}

def wheel(name, version, requires=(), extras=()):
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Provides-Extra: {extra}" for extra in extras]
    metadata += [f"Requires-Dist: {req}" for req in requires]
    files = {
        f"{dist}/__init__.py": "",
        f"{info}/METADATA": "\\n".join(metadata) + "\\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\\n".join(record) + "\\n"
    with zipfile.ZipFile(os.path.join(out, f"{dist}-{version}-py3-none-any.whl"), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)

wheel("strands-agents", "1.40.0", [f'{pkg}; extra == "{extra}"' for extra, pkg in EXTRAS.items()], EXTRAS)
wheel("strands-agents-tools", "0.8.6")
wheel("boto3", "1.43.0")
wheel("botocore", "1.43.0")
for pkg in ("openai", "anthropic", "ollama", "google-genai"):
    wheel(pkg, "1.0.0")
`;
