import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { probePython, PythonUnavailableError } from '../functions/runtimes/python-interpreter.ts';

/**
 * `npm run setup:python`: a virtual environment `.venv` in the checkout, made with a supported
 * interpreter, holding the packages user code may import (layers/python/requirements.txt, the
 * agent framework among them). `npm start` prefers `.venv/bin/python` when PYTHON is unset, so
 * nothing else needs setting. Needs the Python package index (or a mirror: PIP_INDEX_URL).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REQUIREMENTS = join(ROOT, 'layers', 'python', 'requirements.txt');

/**
 * What `--providers` installs for each model provider: Strands' extra for its model class (the
 * provider's own client library). Bedrock's client (boto3) is in the requirements already, and
 * Strands' LlamaCppModel speaks to llama.cpp's server with httpx, which Strands brings.
 */
const PROVIDER_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  bedrock: [],
  openai: ['strands-agents[openai]'],
  anthropic: ['strands-agents[anthropic]'],
  gemini: ['strands-agents[gemini]'],
  ollama: ['strands-agents[ollama]'],
  llamacpp: [],
  litellm: ['strands-agents[litellm]'],
  mistral: ['strands-agents[mistral]'],
  writer: ['strands-agents[writer]'],
  llamaapi: ['strands-agents[llamaapi]'],
};

const USAGE = `Usage: npm run setup:python [-- --python PATH] [--venv DIR] [--providers LIST]

Creates a virtual environment (default .venv in the checkout) with the packages agents and actions
may import (layers/python/requirements.txt, including the agent framework strands), using pip and
the Python package index (or the mirror in PIP_INDEX_URL).

Options:
  --python PATH  the interpreter to build it from, Python 3.11 or 3.12 (default: $PYTHON, else python3)
  --venv DIR     where to create it (default: .venv in the checkout, which npm start uses when
                 PYTHON is unset)
  --providers LIST
                 also the client libraries of these model providers' Strands model classes,
                 comma separated (e.g. openai,anthropic,ollama), of:
                 ${Object.keys(PROVIDER_PACKAGES).join(', ')}
  -h, --help     show this text`;

/** A failure the user can fix: printed as one line, exit code 1. */
class SetupError extends Error {}

async function main(argv: readonly string[]): Promise<void> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: { python: { type: 'string' }, venv: { type: 'string' }, providers: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new SetupError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (args.values.help) {
    console.log(USAGE);
    return;
  }
  const python = args.values.python ?? process.env['PYTHON'] ?? 'python3';
  if (python === '') throw new SetupError('--python needs a path or a name on PATH');
  const venv = resolve(ROOT, args.values.venv ?? '.venv');
  const providers = providersOf(args.values.providers);
  const packages = [...new Set(providers.flatMap((provider) => PROVIDER_PACKAGES[provider] ?? []))];

  // The same check the platform makes at start: a venv of an unsupported Python would only fail there.
  let base;
  try {
    base = await probePython(python);
  } catch (error) {
    if (error instanceof PythonUnavailableError) throw new SetupError(`Cannot set up Python: ${error.message}`);
    throw error;
  }
  console.log(`Using ${base.executable} (Python ${base.version})${base.warning ? `; ${base.warning}` : ''}`);

  console.log(`Creating the virtual environment ${venv}`);
  await run(
    base.executable,
    ['-m', 'venv', venv],
    `${base.executable} could not create a virtual environment; on Debian and Ubuntu install python3-venv (or python${base.version.split('.').slice(0, 2).join('.')}-venv)`,
  );
  const venvPython = join(venv, 'bin', 'python');
  if (!existsSync(venvPython)) throw new SetupError(`${venvPython} is missing after creating the virtual environment`);

  const extra = packages.length === 0 ? '' : ` and ${packages.join(' ')} for ${providers.join(', ')}`;
  console.log(`Installing ${relative(process.cwd(), REQUIREMENTS) || REQUIREMENTS}${extra} (needs the Python package index, or PIP_INDEX_URL)`);
  // One pip run, so the providers' packages are resolved together with the requirements.
  await run(
    venvPython,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '-r', REQUIREMENTS, ...packages],
    'pip could not install the requirements: this needs access to the Python package index (pypi.org) or a mirror set in PIP_INDEX_URL',
  );

  const shown = relative(process.cwd(), venvPython) || venvPython;
  const isDefault = venv === resolve(ROOT, '.venv');
  console.log(
    isDefault
      ? `Done. npm start uses ${shown} when PYTHON is unset; its first log lines name the interpreter and say the agent framework is installed.`
      : `Done. Start the platform with PYTHON=${venvPython} npm start.`,
  );
}

/** The `--providers` list, each name checked before anything is created. */
function providersOf(list: string | undefined): string[] {
  if (list === undefined) return [];
  const names = [...new Set(list.split(',').map((name) => name.trim().toLowerCase()))].filter(Boolean);
  const unknown = names.filter((name) => !Object.hasOwn(PROVIDER_PACKAGES, name));
  if (unknown.length > 0) {
    throw new SetupError(
      `Unknown model provider${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: --providers takes ${Object.keys(PROVIDER_PACKAGES).join(', ')}`,
    );
  }
  return names;
}

/** Runs a command with its output shown; a non-zero exit is a SetupError with `why`. */
function run(command: string, args: readonly string[], why: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.once('error', (error) => reject(new SetupError(`${why} (${error.message})`)));
    child.once('close', (code, signal) => (code === 0 ? resolvePromise() : reject(new SetupError(`${why} (${signal ?? `exit code ${code}`})`))));
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof SetupError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
});
