import { chmodSync, copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, LayerVersion, Runtime, TenancyConfig } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { REPO_ROOT } from './function-entries.ts';
import { locallyStagedCode } from './local-asset.ts';

/**
 * Version of the public Lambda Web Adapter layer, as the adapter's README lists it for zip packages
 * (github.com/aws/aws-lambda-web-adapter, "Zip Packages": `LambdaAdapterLayerArm64:30`, adapter 1.x).
 */
export const DEFAULT_WEB_ADAPTER_LAYER_VERSION = 30;

/** AWS account that publishes the Lambda Web Adapter layers in the commercial regions. */
const WEB_ADAPTER_LAYER_ACCOUNT = '753240598075';

/** Port of the runtime server inside the function; the adapter forwards invocations to it. */
export const RUNTIME_PORT = 8080;

/** The Python runtime (`python3 -m platform_runtime.server`), shipped as the function's code. */
export const DEFAULT_RUNTIME_SOURCE_DIR = join(REPO_ROOT, 'python-runtime');

/** Start script the adapter runs as the handler (lib/cloud/runtime-assets/run.sh). */
const RUN_SCRIPT = join(REPO_ROOT, 'lib', 'cloud', 'runtime-assets', 'run.sh');

export interface RuntimeFunctionProps {
  /**
   * Version of the public Lambda Web Adapter layer for arm64,
   * `arn:aws:lambda:<region>:753240598075:layer:LambdaAdapterLayerArm64:<version>`.
   * @default DEFAULT_WEB_ADAPTER_LAYER_VERSION
   */
  readonly webAdapterLayerVersion?: number;
  /**
   * Memory of every execution environment, in MB; CPU scales with it. The limits of one run
   * (memoryMb, timeoutMs) are enforced inside by the runtime server (rlimits, kill at the deadline),
   * because Lambda's memory is fixed per function, not per invocation.
   * @default 3008
   */
  readonly memorySize?: number;
  /** Longest invocation: the runtime's own timeout of a run is at most 900 s. @default 15 minutes */
  readonly timeout?: Duration;
  /** Directory holding the `platform_runtime` package. @default DEFAULT_RUNTIME_SOURCE_DIR */
  readonly sourceDir?: string;
}

/**
 * The Lambda that runs users' Python agents and actions: the runtime server of `python-runtime/`
 * (Python 3.12, arm64) behind the Lambda Web Adapter in response-stream mode, so each invocation is
 * an HTTP request to the server (POST /invoke answers with streamed NDJSON).
 *
 * Tenant isolation mode (PER_TENANT): the platform invokes it with the owner's user id as tenant id,
 * and Lambda never reuses an execution environment across tenants, so one user's code can never
 * see another's process, memory or /tmp. The mode is fixed at creation, and such a function can
 * have no function URL: it is only reachable through Invoke / InvokeWithResponseStream by the
 * platform functions granted that.
 *
 * Its role can write its own logs, nothing else: no model calls, no tables, no bucket, no KMS key.
 * User code is untrusted, and whatever the runtime process can do, a sandbox escape can too; runs
 * reach Bedrock with their owner's stored AWS keys, never with the platform's credentials (the
 * runtime also passes user code only the run's own environment, not the role's credentials).
 */
export class RuntimeFunction extends Construct implements IGrantable {
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: RuntimeFunctionProps = {}) {
    super(scope, id);
    const sourceDir = props.sourceDir ?? DEFAULT_RUNTIME_SOURCE_DIR;
    const layerVersion = props.webAdapterLayerVersion ?? DEFAULT_WEB_ADAPTER_LAYER_VERSION;
    if (!Number.isInteger(layerVersion) || layerVersion < 1) throw new Error(`Invalid Lambda Web Adapter layer version ${layerVersion}.`);
    const stack = Stack.of(this);

    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    // Created here rather than by the function, which would attach AWSLambdaBasicExecutionRole
    // (logs in any group of the account).
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Agent platform runtime: its own logs only',
    });
    this.logGroup.grantWrite(this.role);

    this.function = new LambdaFunction(this, 'Function', {
      description: 'Agent platform runtime: runs user Python agents and actions',
      runtime: Runtime.PYTHON_3_12,
      architecture: Architecture.ARM_64,
      handler: 'run.sh',
      // Hashed from what is shipped, so a change of run.sh alone also deploys.
      code: locallyStagedCode(sourceDir, Runtime.PYTHON_3_12, (outputDir) => stageRuntimeAsset(sourceDir, outputDir)),
      // The layer is published only in the `aws` partition, under this account.
      layers: [
        LayerVersion.fromLayerVersionArn(
          this,
          'WebAdapter',
          `arn:aws:lambda:${stack.region}:${WEB_ADAPTER_LAYER_ACCOUNT}:layer:LambdaAdapterLayerArm64:${layerVersion}`,
        ),
      ],
      role: this.role,
      logGroup: this.logGroup,
      memorySize: props.memorySize ?? 3008,
      timeout: props.timeout ?? Duration.minutes(15),
      tenancyConfig: TenancyConfig.PER_TENANT,
      environment: {
        AWS_LAMBDA_EXEC_WRAPPER: '/opt/bootstrap',
        AWS_LWA_INVOKE_MODE: 'response_stream',
        AWS_LWA_PORT: String(RUNTIME_PORT),
        AWS_LWA_READINESS_CHECK_PATH: '/health',
      },
    });
  }

  get grantPrincipal(): IPrincipal {
    return this.role;
  }
}

/** Top-level entries of the runtime directory that are not shipped. */
const EXCLUDED_TOP_LEVEL = new Set(['tests', 'README.md']);

/**
 * Writes the function's code into `outputDir`: the runtime directory without its tests, README and
 * byte-code caches (standard library only, so nothing is installed), plus the executable `run.sh`.
 */
export function stageRuntimeAsset(sourceDir: string, outputDir: string): void {
  copyTree(sourceDir, outputDir, true);
  const script = join(outputDir, 'run.sh');
  copyFileSync(RUN_SCRIPT, script);
  // The zip keeps file modes, and the adapter executes the handler file.
  chmodSync(script, 0o755);
}

function copyTree(from: string, to: string, topLevel: boolean): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (topLevel && EXCLUDED_TOP_LEVEL.has(entry.name)) continue;
    if (entry.name === '__pycache__' || entry.name.endsWith('.pyc')) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target, false);
    else if (entry.isFile()) copyFileSync(source, target);
  }
}
