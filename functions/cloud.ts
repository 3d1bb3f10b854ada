import { areaNamed, areas } from '../lib/manifest/areas.ts';
import { runSchedule, type ScheduleDefinition } from './core/entry/entry-point.ts';
import type { QueueDefinition } from './core/entry/queue.ts';
import { createdObjectsOf, runStorageEvent, storageEventsFor, type StorageEventDefinition } from './core/entry/storage-event.ts';
import { createSqsConsumer, createSqsTaskQueue, parseQueueUrls } from './core/tasks/sqs-tasks.ts';
import type { TaskQueue } from './core/tasks/tasks.ts';
import { entryPointsOf, routes } from '../lib/manifest/routes.ts';
import { createCognitoVerifier } from './core/auth/cognito.ts';
import type { IdentityVerifier } from './core/auth/credentials.ts';
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createRunTokens, secretsManagerRunTokenKey, type RunTokens } from './core/auth/run-token.ts';
import { systemClock } from './core/clock.ts';
import { createLogger, type LogLevel } from './core/logger.ts';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Compute } from './runtimes/compute.ts';
import { createLambdaCompute } from './runtimes/lambda-compute.ts';
import { createLambdaMcpRuntime } from './runtimes/mcp-lambda-runtime.ts';
import type { McpRuntime } from './runtimes/mcp-runtime.ts';
import { ConfigError, configFromEnv, type Config } from './core/config.ts';
import { createKmsSecretBox, type SecretBox } from './core/secret-box.ts';
import { createSecretsManagerReader, type SecretReader } from './core/secret-reader.ts';
import { createFallbackHandler, createRestHandler, type RestHandler } from './core/http/api-gateway.ts';
import { createStreamHandler, type StreamingLambdaHandler } from './core/http/lambda-stream.ts';
import type { RouteDefinition, StreamRouteDefinition } from './core/http/route.ts';
import type { Host } from '../lib/manifest/types.ts';
import { isRestApiRoute } from '../lib/manifest/http.ts';
import { createPorts, type Ports } from './ports.ts';

/**
 * Composition root of every cloud function. The generated entry of an area function imports its
 * handler modules and calls `areaHandler`; the platform is built once per execution environment.
 */
let platform: Ports | undefined;

/** The platform of this execution environment (or service container), built on first use. */
export function cloudPlatform(): Ports {
  if (platform !== undefined) return platform;
  const config = configFromEnv();
  // One Secrets Manager reader for the run-token secret and the OAuth client secrets; each value is
  // read when first needed and kept for the execution environment.
  const secrets = createSecretsManagerReader(new SecretsManagerClient({ region: config.AWS_REGION }));
  // Each function receives the variables of its own area's ports only (lib/cloud/area-functions.ts),
  // so adapters are built when first used: a missing variable fails that use with the configuration
  // error (logged, answered 500), and never a function that does not need the port.
  platform = createPorts(
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
    areas,
  );
  return platform;
}

let sqs: SQSClient | undefined;
function sqsClient(): SQSClient {
  sqs ??= new SQSClient({ region: configFromEnv().AWS_REGION });
  return sqs;
}

function sqsTaskQueue(config: Config): TaskQueue {
  return createSqsTaskQueue({ sqs: sqsClient(), queueUrls: parseQueueUrls('TASK_QUEUES', config.TASK_QUEUES) });
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

/** The Lambda handler of `area`, given its handler modules keyed by route id. */
export function areaHandler(area: string, definitions: Readonly<Record<string, RouteDefinition>>): RestHandler {
  const bound = routes
    .filter((r) => r.area === area && r.mode === 'buffered')
    .map((spec) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for route ${spec.id} is missing from the ${area} function`);
      return { spec, definition, area: areaNamed(spec.area) };
    });
  return createRestHandler(bound, cloudPlatform);
}

/** The handler of a response-streaming function URL serving `host`'s streaming routes. */
export function streamingHandler(host: Host, definitions: Readonly<Record<string, StreamRouteDefinition>>): StreamingLambdaHandler {
  const bound = routes
    .filter((r) => r.host === host && r.mode === 'streaming')
    .map((spec) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for streaming route ${spec.id} is missing from the ${host} function`);
      return { spec, definition, area: areaNamed(spec.area) };
    });
  return createStreamHandler(bound, cloudPlatform);
}

/**
 * The handler of the function running `area`'s schedules: EventBridge Scheduler invokes it with
 * `{ entryPoint }`, the id of the schedule that fired, and its scheduled time in the event's context.
 */
export function scheduleHandler(
  area: string,
  definitions: Readonly<Record<string, ScheduleDefinition>>,
): (event: { entryPoint?: unknown }) => Promise<{ outcome: string }> {
  const module = areaNamed(area);
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
    return { outcome: await runSchedule(schedule, cloudPlatform(), new Date()) };
  };
}

/**
 * The handler of the function consuming `area`'s queues: Lambda's SQS event source invokes it with
 * batches of one queue's messages, and it answers with the ones to retry (sqs-tasks.ts).
 */
export function queueHandler(area: string, definitions: Readonly<Record<string, QueueDefinition>>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const module = areaNamed(area);
  const queues = entryPointsOf(module, 'queue').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for queue ${spec.id} is missing from the ${area} queue function`);
    return { spec, definition, area: module };
  });
  return createSqsConsumer({ queues, platform: cloudPlatform, sqs: sqsClient });
}

/**
 * The handler of the function running `area`'s storage events: S3 invokes it asynchronously with
 * the notification of an object created under one of their prefixes. A failed run throws, so
 * Lambda retries the event (STORAGE_EVENT_ATTEMPTS in all, as the stack configures it).
 */
export function storageEventHandler(area: string, definitions: Readonly<Record<string, StorageEventDefinition>>): (event: S3Event) => Promise<void> {
  const module = areaNamed(area);
  const bound = entryPointsOf(module, 'storageEvent').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for storage event ${spec.id} is missing from the ${area} storage function`);
    return { spec, definition, area: module };
  });
  return async (event) => {
    const platform = cloudPlatform();
    const failed: string[] = [];
    for (const object of createdObjectsOf(event, { bucketPrefix: platform.config.BUCKET_PREFIX, keys: 'url-encoded' })) {
      for (const entry of storageEventsFor(bound, object)) {
        if ((await runStorageEvent(entry, platform, object)) !== 'succeeded') failed.push(`${entry.spec.id} (${object.key})`);
      }
    }
    if (failed.length > 0) throw new Error(`Storage events failed: ${failed.join(', ')}`);
  };
}

/** The catch-all function behind `ANY /{proxy+}`: 404 and 405 in the platform's envelope. */
const fallbackLog = createLogger(logLevelOf(process.env['LOG_LEVEL']), { stage: process.env['STAGE'] ?? 'cloud' });
export const fallbackHandler: RestHandler = createFallbackHandler(routes.filter(isRestApiRoute), () => fallbackLog);

/** The fallback function needs no platform configuration, only a log level (bad values log at info). */
function logLevelOf(value: string | undefined): LogLevel {
  return value === 'debug' || value === 'info' || value === 'warn' || value === 'error' || value === 'silent' ? value : 'info';
}
