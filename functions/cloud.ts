import { runSchedule, type ScheduleDefinition } from './core/entry/entry-point.ts';
import type { QueueDefinition } from './core/entry/queue.ts';
import { createdObjectsOf, runStorageEvent, storageEventsFor, type StorageEventDefinition } from './core/entry/storage-event.ts';
import { createSqsConsumer, createSqsTaskQueue, parseQueueUrls } from './core/tasks/sqs-tasks.ts';
import type { TaskQueue } from './core/tasks/tasks.ts';
import { entryPointsOf } from '../lib/manifest/define.ts';
import { createCognitoVerifier } from './core/auth/cognito.ts';
import type { IdentityVerifier } from './core/auth/credentials.ts';
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createRunTokens, secretsManagerRunTokenKey, type RunTokens } from './core/auth/run-token.ts';
import { systemClock } from './core/clock.ts';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Compute } from './runtimes/compute.ts';
import { createLambdaCompute } from './runtimes/lambda-compute.ts';
import { createLambdaMcpRuntime } from './runtimes/mcp-lambda-runtime.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import { ConfigError, parseConfig, type Config } from './core/config.ts';
import { createKmsSecretBox, type SecretBox } from './core/secret-box.ts';
import { createSecretsManagerReader, type SecretReader } from './core/secret-reader.ts';
import { createRestHandler, type RestHandler } from './core/http/api-gateway.ts';
import { createStreamHandler, type StreamingLambdaHandler } from './core/http/lambda-stream.ts';
import type { RouteDefinition, StreamRouteDefinition } from './core/http/route.ts';
import type { AreaModule, Host } from '../lib/manifest/types.ts';
import { createPorts, type Ports } from './ports.ts';

/**
 * Composition root of every cloud function. The generated entry of a function (lib/cloud/function-entries.ts)
 * imports its handler modules and the area modules it needs, never the whole list in
 * lib/manifest/areas.ts: each module's ports import its area's stores, so the whole list would put
 * every area's code in every bundle. Each handler builds its platform from those modules when first
 * needed; an execution environment runs one handler, so one platform.
 */
export function cloudPlatform(modules: readonly AreaModule[]): () => Ports {
  let platform: Ports | undefined;
  return () => (platform ??= buildCloudPlatform(modules));
}

function buildCloudPlatform(modules: readonly AreaModule[]): Ports {
  const config = parseConfig(process.env, modules);
  // One Secrets Manager reader for the run-token secret and the OAuth client secrets; each value is
  // read when first needed and kept for the execution environment.
  const secrets = createSecretsManagerReader(new SecretsManagerClient({ region: config.AWS_REGION }));
  // Each function receives the variables of its own area's ports only (lib/cloud/area-functions.ts),
  // so adapters are built when first used: a missing variable fails that use with the configuration
  // error (logged, answered 500), and never a function that does not need the port.
  return createPorts(
    config,
    {
      identity: cognitoVerifier(config),
      runTokens: builtOnFirstUse(() => cloudRunTokens(config, secrets)),
      secretBox: builtOnFirstUse(() => kmsSecretBox(config)),
      compute: builtOnFirstUse(() => lambdaCompute(config)),
      mcpRuntime: builtOnFirstUse(() => lambdaMcpRuntime(config)),
      taskQueue: builtOnFirstUse(() => sqsTaskQueue(config)),
      secrets,
    },
    modules,
  );
}

let sqs: SQSClient | undefined;
function sqsClient(config: Config): SQSClient {
  sqs ??= new SQSClient({ region: config.AWS_REGION });
  return sqs;
}

function sqsTaskQueue(config: Config): TaskQueue {
  return createSqsTaskQueue({ sqs: sqsClient(config), queueUrls: parseQueueUrls('TASK_QUEUES', config.TASK_QUEUES) });
}

/** An adapter built by `build` when one of its members is first read; a build that throws throws at each use. */
function builtOnFirstUse<T extends object>(build: () => T): T {
  let built: T | undefined;
  return new Proxy({} as T, {
    get(_target, property) {
      built ??= build();
      const value = Reflect.get(built, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(built) : value;
    },
  });
}

function lambdaCompute(config: Config): Compute {
  if (!config.RUNTIME_FUNCTION_NAME) throw new ConfigError('Invalid platform configuration: RUNTIME_FUNCTION_NAME: is required in the cloud');
  return createLambdaCompute({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.RUNTIME_FUNCTION_NAME });
}

function lambdaMcpRuntime(config: Config): McpRuntime {
  if (!config.MCP_RUNTIME_FUNCTION_NAME)
    throw new ConfigError('Invalid platform configuration: MCP_RUNTIME_FUNCTION_NAME: is required in the cloud to run MCP servers');
  return createLambdaMcpRuntime({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.MCP_RUNTIME_FUNCTION_NAME });
}

function cloudRunTokens(config: Config, secrets: SecretReader): RunTokens {
  const secretArn = config.RUN_TOKEN_SECRET_ARN;
  if (!secretArn) throw new ConfigError('Invalid platform configuration: RUN_TOKEN_SECRET_ARN: is required in the cloud');
  return createRunTokens(
    secretsManagerRunTokenKey(() => secrets.read(secretArn)),
    systemClock,
  );
}

function kmsSecretBox(config: Config): SecretBox {
  if (!config.KEYS_KMS_KEY_ID) throw new ConfigError('Invalid platform configuration: KEYS_KMS_KEY_ID: is required in the cloud');
  return createKmsSecretBox(new KMSClient({ region: config.AWS_REGION }), config.KEYS_KMS_KEY_ID);
}

function cognitoVerifier(config: Config): IdentityVerifier | null {
  if (!config.COGNITO_USER_POOL_ID || !config.COGNITO_CLIENT_ID) return null;
  return createCognitoVerifier({ userPoolId: config.COGNITO_USER_POOL_ID, clientId: config.COGNITO_CLIENT_ID });
}

/** The module named `name` among a function's `modules`; the generated entry lists it, so a miss is a bug. */
function moduleNamed(modules: readonly AreaModule[], name: string): AreaModule {
  const area = modules.find((m) => m.name === name);
  if (area === undefined) throw new Error(`No area module named ${name} among this function's modules (${modules.map((m) => m.name).join(', ')})`);
  return area;
}

/**
 * The Lambda handler of `area`, given the function's area modules (`modulesOfFunction`: the area's
 * own and those providing the ports it uses) and its handler modules keyed by route id.
 */
export function areaHandler(area: string, modules: readonly AreaModule[], definitions: Readonly<Record<string, RouteDefinition>>): RestHandler {
  const module = moduleNamed(modules, area);
  const bound = module.routes
    .filter((r) => r.mode === 'buffered')
    .map((spec) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for route ${spec.id} is missing from the ${area} function`);
      return { spec, definition, area: module };
    });
  return createRestHandler(bound, cloudPlatform(modules));
}

/** The handler of a response-streaming function URL serving `host`'s streaming routes, those of the areas in `modules`. */
export function streamingHandler(
  host: Host,
  modules: readonly AreaModule[],
  definitions: Readonly<Record<string, StreamRouteDefinition>>,
): StreamingLambdaHandler {
  const bound = modules
    .flatMap((module) => module.routes.map((spec) => ({ spec, module })))
    .filter(({ spec }) => spec.host === host && spec.mode === 'streaming')
    .map(({ spec, module }) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for streaming route ${spec.id} is missing from the ${host} function`);
      return { spec, definition, area: module };
    });
  return createStreamHandler(bound, cloudPlatform(modules));
}

/**
 * The handler of the function running `area`'s schedules: EventBridge Scheduler invokes it with
 * `{ entryPoint }`, the id of the schedule that fired, and its scheduled time in the event's context.
 */
export function scheduleHandler(
  area: string,
  modules: readonly AreaModule[],
  definitions: Readonly<Record<string, ScheduleDefinition>>,
): (event: { entryPoint?: unknown }) => Promise<{ outcome: string }> {
  const module = moduleNamed(modules, area);
  const platform = cloudPlatform(modules);
  const bound = new Map(
    entryPointsOf(module, 'schedule').map((spec) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for schedule ${spec.id} is missing from the ${area} schedule function`);
      return [spec.id, { spec, definition, area: module }];
    }),
  );
  return async (event) => {
    const schedule = typeof event.entryPoint === 'string' ? bound.get(event.entryPoint) : undefined;
    if (schedule === undefined) throw new Error(`No schedule ${String(event.entryPoint)} in the ${area} schedule function`);
    return { outcome: await runSchedule(schedule, platform(), new Date()) };
  };
}

/**
 * The handler of the function consuming `area`'s queues: Lambda's SQS event source invokes it with
 * batches of one queue's messages, and it answers with the ones to retry (sqs-tasks.ts).
 */
export function queueHandler(
  area: string,
  modules: readonly AreaModule[],
  definitions: Readonly<Record<string, QueueDefinition>>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const module = moduleNamed(modules, area);
  const platform = cloudPlatform(modules);
  const queues = entryPointsOf(module, 'queue').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for queue ${spec.id} is missing from the ${area} queue function`);
    return { spec, definition, area: module };
  });
  return createSqsConsumer({ queues, platform, sqs: () => sqsClient(platform().config) });
}

/**
 * The handler of the function running `area`'s storage events: S3 invokes it asynchronously with
 * the notification of an object created under one of their prefixes. A failed run throws, so
 * Lambda retries the event (STORAGE_EVENT_ATTEMPTS in all, as the stack configures it).
 */
export function storageEventHandler(
  area: string,
  modules: readonly AreaModule[],
  definitions: Readonly<Record<string, StorageEventDefinition>>,
): (event: S3Event) => Promise<void> {
  const module = moduleNamed(modules, area);
  const built = cloudPlatform(modules);
  const bound = entryPointsOf(module, 'storageEvent').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for storage event ${spec.id} is missing from the ${area} storage function`);
    return { spec, definition, area: module };
  });
  return async (event) => {
    const platform = built();
    const failed: string[] = [];
    for (const object of createdObjectsOf(event, { bucketPrefix: platform.config.BUCKET_PREFIX, keys: 'url-encoded' })) {
      for (const entry of storageEventsFor(bound, object)) {
        if ((await runStorageEvent(entry, platform, object)) !== 'succeeded') failed.push(`${entry.spec.id} (${object.key})`);
      }
    }
    if (failed.length > 0) throw new Error(`Storage events failed: ${failed.join(', ')}`);
  };
}
