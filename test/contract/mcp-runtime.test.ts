/**
 * The McpRuntime contract (mcp-runtime.contract.ts) against both adapters:
 * - local: `createLocalMcpRuntime` as `npm start` creates it (lib/local/platform.ts): one sandboxed
 *   Node host per tenant, a bubblewrap sandbox from `prepareOsSandbox`, the platform's egress proxy;
 * - Lambda: `createLambdaMcpRuntime` with the real LambdaClient, against the loopback Lambda
 *   stand-in running the MCP runtime function as lib/cloud/mcp-runtime-function.ts defines it: its
 *   code and its modules layer as the synth stages them (the layer's node_modules on NODE_PATH,
 *   as Lambda puts /opt/nodejs/node_modules there), its handler (mcp-host/lambda.mjs) called
 *   in-process by a Node runtime started with the function's NODE_OPTIONS.
 */
import {
  DEFAULT_MCP_HOST_DIR,
  DEFAULT_MCP_LAYER_DIR,
  DEFAULT_MCP_MODULES_DIR,
  MCP_HOST_HANDLER,
  MCP_RUNTIME_NODE_OPTIONS,
  stageMcpHostAsset,
  stageMcpLayerAsset,
} from '../../lib/cloud/mcp-runtime-function.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLambdaMcpRuntime } from '../../functions/adapters/mcp-runtime/aws.ts';
import { createLocalMcpRuntime } from '../../functions/adapters/mcp-runtime/local.ts';
import { prepareOsSandbox } from '../../functions/runtimes/os-sandbox.ts';
import { startLambdaStandIn } from '../support/lambda-stand-in.ts';
import { describeMcpRuntimeContract } from './mcp-runtime.contract.ts';

const REQUEST_TIMEOUT_MS = 1000;
const MCP_FUNCTION = 'platform-mcp-runtime';
/** A variable of the platform's own process, which no host may inherit. */
const PLATFORM_SECRET = 'PLATFORM_MCP_CONTRACT_SECRET';

describeMcpRuntimeContract('local (sandboxed Node host per tenant)', {
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  async start() {
    process.env[PLATFORM_SECRET] = 'do-not-leak';
    const sandbox = prepareOsSandbox();
    const egress = createEgressProxy();
    const runtime = createLocalMcpRuntime({ sandbox, egress, requestTimeoutMs: REQUEST_TIMEOUT_MS, watchdogGraceMs: 500 });
    return {
      runtime,
      environmentsOf: (tenantId) =>
        runtime
          .stats()
          .processes.filter((p) => p.tenantId === tenantId)
          .map((p) => String(p.pid)),
      hiddenVariables: [PLATFORM_SECRET],
      close: async () => {
        delete process.env[PLATFORM_SECRET];
        await runtime.close();
        await egress.close();
      },
    };
  },
  async startUnavailable() {
    const runtime = createLocalMcpRuntime({ sandbox: Promise.reject(new Error('bubblewrap is not installed (install the bubblewrap package)')) });
    return { runtime, close: () => runtime.close() };
  },
});

describeMcpRuntimeContract('Lambda (MCP runtime function, loopback stand-in)', {
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  async start() {
    // The function's code and layer, outside the repository, so nothing resolves from its node_modules.
    const staged = mkdtempSync(join(tmpdir(), 'mcp-contract-assets-'));
    stageMcpHostAsset(DEFAULT_MCP_HOST_DIR, join(staged, 'task'));
    stageMcpLayerAsset(join(staged, 'opt'), { layerDir: DEFAULT_MCP_LAYER_DIR, modulesDir: DEFAULT_MCP_MODULES_DIR });
    const standIn = await startLambdaStandIn({
      [MCP_FUNCTION]: {
        runtime: 'node',
        codeDir: join(staged, 'task'),
        handler: MCP_HOST_HANDLER,
        // The host keeps a second back from Lambda's deadline to answer 504 itself.
        timeoutMs: REQUEST_TIMEOUT_MS + 1000,
        tenantIsolation: true,
        runtimePath: [dirname(process.execPath)],
        environment: { NODE_OPTIONS: MCP_RUNTIME_NODE_OPTIONS, NODE_PATH: join(staged, 'opt', 'nodejs', 'node_modules') },
      },
    });
    const runtime = createLambdaMcpRuntime({ lambda: standIn.client(), functionName: MCP_FUNCTION, requestTimeoutMs: REQUEST_TIMEOUT_MS });
    return {
      runtime,
      environmentsOf: (tenantId) =>
        standIn
          .environments(MCP_FUNCTION)
          .filter((env) => env.alive && env.tenantId === tenantId)
          .map((env) => env.id),
      // The role's credentials are in every Lambda environment.
      hiddenVariables: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
      close: async () => {
        await standIn.close();
        rmSync(staged, { recursive: true, force: true });
      },
    };
  },
  async startUnavailable() {
    // A stand-in without the function: Lambda answers ResourceNotFoundException.
    const standIn = await startLambdaStandIn({});
    return { runtime: createLambdaMcpRuntime({ lambda: standIn.client(), functionName: MCP_FUNCTION }), close: () => standIn.close() };
  },
});
