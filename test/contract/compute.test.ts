/**
 * The Compute contract (compute.contract.ts) against both adapters:
 * - local: `createLocalCompute` as `npm start` creates it (lib/local/platform.ts): a bubblewrap
 *   sandbox from `prepareOsSandbox` and the platform's egress proxy;
 * - Lambda: `createLambdaCompute` with the real LambdaClient, against the loopback Lambda stand-in
 *   running what the runtime function runs: the function's code (python-runtime, staged as
 *   `stageRuntimeAsset` stages it) started by its handler script lib/cloud/runtime-assets/run.sh,
 *   behind the stand-in's Lambda Web Adapter.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLambdaCompute } from '../../functions/adapters/compute/aws.ts';
import { createLocalCompute } from '../../functions/adapters/compute/local.ts';
import { prepareOsSandbox } from '../../functions/runtimes/os-sandbox.ts';
import { startLambdaStandIn } from '../support/lambda-stand-in.ts';
import { describeComputeContract } from './compute.contract.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNTIME_FUNCTION = 'platform-runtime';

describeComputeContract('local (bubblewrap sandbox per tenant)', {
  async start() {
    const sandbox = prepareOsSandbox();
    const egress = createEgressProxy();
    const compute = createLocalCompute({ sandbox, egress });
    const tenantPids = (tenantId: string) =>
      compute
        .stats()
        .processes.filter((p) => p.role === 'tenant' && p.tenantId === tenantId)
        .map((p) => p.pid);
    return {
      compute,
      environmentsOf: (tenantId) => tenantPids(tenantId).map(String),
      // The pool's pid is the sandbox's; bubblewrap takes the server and its children with it.
      crashEnvironmentsOf: (tenantId) => tenantPids(tenantId).forEach((pid) => process.kill(pid, 'SIGKILL')),
      close: async () => {
        await compute.close();
        await egress.close();
      },
    };
  },
  async startUnavailable() {
    const compute = createLocalCompute({ sandbox: Promise.reject(new Error('bubblewrap is not installed (install the bubblewrap package)')) });
    return { compute, close: () => compute.close() };
  },
});

describeComputeContract('Lambda (runtime function behind the Lambda Web Adapter, loopback stand-in)', {
  async start() {
    const code = stageRuntimeFunctionCode();
    const standIn = await startLambdaStandIn({
      [RUNTIME_FUNCTION]: {
        runtime: 'web-adapter',
        codeDir: code,
        handler: 'run.sh',
        timeoutMs: 60_000,
        tenantIsolation: true,
        runtimePath: [pythonBinDir()],
        environment: { AWS_LWA_INVOKE_MODE: 'response_stream', AWS_LWA_READINESS_CHECK_PATH: '/health' },
      },
    });
    const compute = createLambdaCompute({ lambda: standIn.client(), functionName: RUNTIME_FUNCTION });
    const environments = (tenantId: string) => standIn.environments(RUNTIME_FUNCTION).filter((env) => env.alive && env.tenantId === tenantId);
    return {
      compute,
      environmentsOf: (tenantId) => environments(tenantId).map((env) => env.id),
      crashEnvironmentsOf: (tenantId) => environments(tenantId).forEach((env) => standIn.kill(env.id)),
      close: async () => {
        await standIn.close();
        rmSync(code, { recursive: true, force: true });
      },
    };
  },
  async startUnavailable() {
    // A stand-in without the function: Lambda answers ResourceNotFoundException.
    const standIn = await startLambdaStandIn({});
    return { compute: createLambdaCompute({ lambda: standIn.client(), functionName: RUNTIME_FUNCTION }), close: () => standIn.close() };
  },
});

/**
 * The runtime function's code as lib/cloud/runtime-function.ts stages it (`stageRuntimeAsset`,
 * not imported here because its module loads the CDK): python-runtime without its tests, README
 * and byte-code caches, plus the executable run.sh.
 */
function stageRuntimeFunctionCode(): string {
  const dir = mkdtempSync(join(tmpdir(), 'runtime-function-'));
  const source = join(ROOT, 'python-runtime');
  cpSync(source, dir, {
    recursive: true,
    filter: (path) => {
      const relative = path.slice(source.length + 1);
      return !['tests', 'README.md'].includes(relative) && !relative.split('/').includes('__pycache__') && !relative.endsWith('.pyc');
    },
  });
  copyFileSync(join(ROOT, 'lib', 'cloud', 'runtime-assets', 'run.sh'), join(dir, 'run.sh'));
  chmodSync(join(dir, 'run.sh'), 0o755);
  return dir;
}

/** Where the `python3` interpreter really lives (a pyenv shim needs its own environment), for the function's PATH. */
function pythonBinDir(): string {
  const found = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`python3 could not describe itself: ${found.stderr}`);
  return dirname(found.stdout.trim());
}
