/**
 * The Python interpreter the local runtime runs on: found once, asked about itself in one short
 * subprocess, and judged against what `python-runtime/` supports (its README: CPython 3.11 and
 * 3.12). The answer is what the platform reports at start (the preflight) and what every runtime
 * server is started with, so the line at start and the runs always agree on the interpreter.
 */
import { spawn } from 'node:child_process';
import * as z from 'zod';
import { inheritedEnv } from './process-pool.ts';

/** Oldest version the runtime runs on: it relies on 3.11's audit events and `except*`-era stdlib. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];
/** Newest version the runtime's suite runs on (.ci/run); newer ones are used, with a warning. */
export const NEWEST_TESTED_PYTHON: readonly [number, number] = [3, 12];
/** The framework agents import; actions do not need it (layers/python/requirements.txt). */
export const AGENT_FRAMEWORK = 'strands';
/** Modules of layers/python/requirements.txt: a ModuleNotFoundError for one of them means "install the requirements". */
export const REQUIREMENT_MODULES = ['strands', 'strands_tools', 'boto3', 'botocore', 'mcp'] as const;

export const INSTALL_PYTHON_HINT = 'install Python 3.11 or 3.12 (e.g. apt-get install python3.11, or pyenv install 3.12) or set PYTHON=/path/to/python3.11+';

/** Variables the lookup may inherit (pyenv shims need theirs); nothing else of the platform's. */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PYENV_ROOT', 'PYENV_VERSION'] as const;

/** A usable interpreter, as it describes itself. */
export interface PythonInterpreter {
  /** The real executable (pyenv shims are scripts that exec it). */
  readonly executable: string;
  /** Its installation and every directory on its default path: bound read-only into sandboxes. */
  readonly roots: readonly string[];
  /** `3.11.7` */
  readonly version: string;
  /** Whether the agent framework is installed where the runtime will look (the interpreter's path plus `pythonPath`). */
  readonly framework: boolean;
  /** Set when the version is newer than any the runtime is tested on. */
  readonly warning: string | null;
}

/** No usable interpreter: the message says what to install or set. */
export class PythonUnavailableError extends Error {
  override readonly name = 'PythonUnavailableError';
}

// `find_spec` rather than an import: importing strands takes about a second (it pulls in boto3 and
// OpenTelemetry), and the runtime's fork server imports it anyway; a broken install still shows
// its own error at the first chat. Extra path entries come as arguments, like the runtime's PYTHONPATH.
const PROBE = `
import importlib.util, json, os, sys
roots = sorted({p for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path] if p and os.path.isdir(p)})
sys.path[0:0] = sys.argv[1:]
try:
    framework = importlib.util.find_spec(${JSON.stringify(AGENT_FRAMEWORK)}) is not None
except Exception:
    framework = False
print(json.dumps({"executable": sys.executable, "roots": roots, "version": list(sys.version_info[:3]), "framework": framework}))
`;

const probeAnswer = z.object({
  executable: z.string().min(1),
  roots: z.array(z.string()),
  version: z.tuple([z.number().int(), z.number().int(), z.number().int()]),
  framework: z.boolean(),
});

/**
 * Runs `python` (a path, or a name looked up on PATH) once, isolated (`-I`: no user site, no
 * PYTHON* variables, as in the runtime's sandbox), and judges its answer. Rejects with a
 * PythonUnavailableError naming what to install when it is missing, broken or too old.
 */
export function probePython(
  python: string,
  options: { readonly pythonPath?: readonly string[]; readonly timeoutMs?: number } = {},
): Promise<PythonInterpreter> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-I', '-c', PROBE, ...(options.pythonPath ?? [])], {
      env: inheritedEnv(process.env, INHERITED_ENV),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 15_000,
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-1000)));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new PythonUnavailableError(
          error.code === 'ENOENT'
            ? `${python} was not found; ${INSTALL_PYTHON_HINT}`
            : `${python} could not be started (${error.message}); ${INSTALL_PYTHON_HINT}`,
        ),
      ),
    );
    child.once('close', (code, signal) => {
      if (code !== 0) {
        const why = err.trim().split('\n').at(-1) || (signal ? `killed by ${signal}` : `exit code ${code}`);
        return reject(new PythonUnavailableError(`${python} could not describe itself (${why}); ${INSTALL_PYTHON_HINT}`));
      }
      let answer: z.infer<typeof probeAnswer>;
      try {
        answer = probeAnswer.parse(JSON.parse(out));
      } catch {
        return reject(new PythonUnavailableError(`${python} gave an unexpected answer (is it a CPython 3 interpreter?); ${INSTALL_PYTHON_HINT}`));
      }
      const [major, minor, micro] = answer.version;
      const version = `${major}.${minor}.${micro}`;
      if (compare([major, minor], MIN_PYTHON) < 0) {
        return reject(new PythonUnavailableError(`${python} is Python ${version}; the runtime needs ${MIN_PYTHON.join('.')} or newer: ${INSTALL_PYTHON_HINT}`));
      }
      resolve({
        executable: answer.executable,
        // `/` is never bound as a root: it would hand the sandbox the whole file system.
        roots: answer.roots.filter((root) => root !== '/'),
        version,
        framework: answer.framework,
        warning:
          compare([major, minor], NEWEST_TESTED_PYTHON) > 0
            ? `Python ${version} is newer than the runtime is tested on (${MIN_PYTHON.join('.')}–${NEWEST_TESTED_PYTHON.join('.')})`
            : null,
      });
    });
  });
}

/** The command that installs the agent framework into `executable`. */
export function installFrameworkCommand(executable: string): string {
  return `${executable} -m pip install -r layers/python/requirements.txt (or npm run setup:python)`;
}

/**
 * The preflight's one line at start: which interpreter, its version, whether agents can import
 * their framework (actions do not need it).
 */
export function describeInterpreter(python: PythonInterpreter): string {
  const framework = python.framework
    ? `agent framework (${AGENT_FRAMEWORK}) installed`
    : `agent framework (${AGENT_FRAMEWORK}) not installed: actions run, agents that import it fail until ${installFrameworkCommand(python.executable)}`;
  return `Python runtime: ${python.executable} (Python ${python.version}); ${framework}${python.warning ? `; ${python.warning}` : ''}`;
}

/**
 * A hint for a run that failed with ModuleNotFoundError for one of the requirements: names the
 * interpreter to install them into. Null for any other error (a user's own missing module).
 */
export function missingRequirementHint(message: string, executable: string): string | null {
  const missing = /No module named '([A-Za-z0-9_]+)/.exec(message)?.[1];
  if (missing === undefined || !(REQUIREMENT_MODULES as readonly string[]).includes(missing)) return null;
  return `${missing} is not installed for the runtime's Python ${executable}; install it with ${installFrameworkCommand(executable)}`;
}

function compare(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}
