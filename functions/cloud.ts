import { runSchedule, type ScheduleDefinition } from './core/entry/entry-point.ts';
import type { QueueDefinition } from './core/entry/queue.ts';
import { createdObjectsOf, runStorageEvent, storageEventsFor, type StorageEventDefinition } from './core/entry/storage-event.ts';
import type { SqsConsumerOptions } from './adapters/task-queue/aws.ts';
import { entryPointsOf } from '../lib/manifest/define.ts';
import { cloudAdapterPortsOf, type CloudAdapterPort } from '../lib/manifest/port-resources.ts';
import { createCognitoVerifier } from './core/auth/cognito.ts';
import type { IdentityVerifier } from './core/auth/credentials.ts';
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createRunTokens, secretsManagerKeyRing, type RunTokens, type RunTokenSecretStage } from './core/auth/run-token.ts';
import { systemClock } from './core/clock.ts';
import type { S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ConfigError, parseConfig, type Config } from './core/config.ts';
import { createSecretsManagerReader } from './core/secret-reader.ts';
import { createRestHandler, type RestHandler } from './core/http/api-gateway.ts';
import { createStreamHandler, type StreamingLambdaHandler } from './core/http/lambda-stream.ts';
import type { RouteDefinition, StreamRouteDefinition } from './core/http/route.ts';
import type { AreaModule, Host } from '../lib/manifest/types.ts';
import { createPorts, type PortAdapters, type Ports } from './ports.ts';
import { isAgentRunEvent, type AgentRunEvent, type AgentRunResult } from './agents/agent-runs.ts';

/**
 * The adapters of the ports only some functions use, each built from the configuration when the
 * port is first used (functions/adapters/<port>/aws.ts). The generated entry imports and passes exactly
 * those its areas need (`cloudAdapterPortsOf`), so a function that never runs user code holds no
 * runtime invoke code and loads no Lambda, KMS or SQS client at cold start.
 */
export type CloudAdapters = { readonly [P in CloudAdapterPort]?: (config: Config) => PortAdapters[P] };

/** A queue function's adapters: the consumer of Lambda's SQS events besides the ports' (functions/adapters/task-queue/aws.ts). */
export interface QueueAdapters extends CloudAdapters {
  readonly queueConsumer: (options: Omit<SqsConsumerOptions, 'sqs'>) => (event: SQSEvent) => Promise<SQSBatchResponse>;
}

/**
 * Composition root of every cloud function. The generated entry of a function (lib/cloud/function-entries.ts)
 * imports its handler modules, the area modules it needs and the adapters of the ports those use,
 * never the whole lists: each module's ports import its area's stores and each adapter its SDK
 * client, so the whole lists would put every area's code and client in every bundle. Each handler
 * builds its platform from those modules when first needed; an execution environment runs one
 * handler, so one platform. `served` are the areas whose handlers the function runs.
 */
export function cloudPlatform(served: readonly AreaModule[], modules: readonly AreaModule[], adapters: CloudAdapters): () => Ports {
  checkWired(served, modules, adapters);
  let ports: Ports | undefined;
  return () => (ports ??= buildCloudPlatform(modules, adapters));
}

/**
 * Fails at start, naming the port, when a served area needs an adapter the entry did not pass: as
 * `portsForArea` does for a port no module provides, but before the first request instead of at
 * its first use of the port.
 */
function checkWired(served: readonly AreaModule[], modules: readonly AreaModule[], adapters: CloudAdapters): void {
  const missing = [...cloudAdapterPortsOf(served, modules)].filter(([port]) => adapters[port] === undefined);
  if (missing.length > 0)
    throw new Error(
      missing
        .map(
          ([port, area]) => `The ${area} area uses the ${port} port, whose cloud adapter this function's entry does not pass (lib/cloud/function-entries.ts).`,
        )
        .join(' '),
    );
}

function buildCloudPlatform(modules: readonly AreaModule[], adapters: CloudAdapters): Ports {
  const config = parseConfig(process.env, modules);
  // One Secrets Manager reader for the run-token secret and the OAuth client secrets; each value is
  // read when first needed and kept for the execution environment.
  const secretsManager = new SecretsManagerClient({ region: config.AWS_REGION });
  const secrets = createSecretsManagerReader(secretsManager);
  // Each function receives the variables of its own area's ports only (lib/cloud/area-functions.ts),
  // so adapters are built when first used: a missing variable fails that use with the configuration
  // error (logged, answered 500), and never a function that does not need the port.
  return createPorts(
    config,
    {
      identity: cognitoVerifier(config),
      runTokens: builtOnFirstUse(() => cloudRunTokens(config, secretsManager)),
      compute: adapterOf('compute', config, adapters),
      mcpRuntime: adapterOf('mcpRuntime', config, adapters),
      secretBox: adapterOf('secretBox', config, adapters),
      taskQueue: adapterOf('taskQueue', config, adapters),
      blobs: adapterOf('blobs', config, adapters),
      schedules: adapterOf('schedules', config, adapters),
      agentRuns: adapterOf('agentRuns', config, adapters),
      secrets,
    },
    modules,
  );
}

/**
 * `port`'s adapter, built on first use. One the entry did not pass is reached only through a
 * module the function serves no handler of (`checkWired` covers the served ones), and fails there.
 */
function adapterOf<P extends CloudAdapterPort>(port: P, config: Config, adapters: CloudAdapters): PortAdapters[P] {
  const build = adapters[port] as ((config: Config) => PortAdapters[P]) | undefined;
  return builtOnFirstUse(() => {
    if (build === undefined) throw new Error(`The ${port} port has no cloud adapter in this function: its entry passes only those its areas need.`);
    return build(config);
  });
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

/** Run tokens under the secret's current and previous values, so a rotation (lib/cloud/rotation/) breaks no run. */
function cloudRunTokens(config: Config, secretsManager: SecretsManagerClient): RunTokens {
  const secretArn = config.RUN_TOKEN_SECRET_ARN;
  if (!secretArn) throw new ConfigError('Invalid platform configuration: RUN_TOKEN_SECRET_ARN: is required in the cloud');
  const fetchStage = async (stage: RunTokenSecretStage): Promise<string | null> => {
    try {
      const out = await secretsManager.send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: stage }));
      return out.SecretString ?? null;
    } catch (error) {
      // Before the first rotation the secret has no AWSPREVIOUS version.
      if (stage === 'AWSPREVIOUS' && error instanceof ResourceNotFoundException) return null;
      throw error;
    }
  };
  return createRunTokens(secretsManagerKeyRing(fetchStage, systemClock), systemClock);
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

/** What the agents function does with an agent run (functions/agents/agent-runs.service.ts): its generated entry passes it. */
export type AgentRunServer = (event: AgentRunEvent, ports: Ports) => Promise<AgentRunResult>;

/**
 * The Lambda handler of `area`, given the function's area modules (`modulesOfFunction`: the area's
 * own and those providing the ports it uses), the adapters those ports need and its handler
 * modules keyed by route id. The function holding the chat service also gets `serveAgentRun`: an
 * `AgentRunEvent` (a direct Invoke by a function granted it, never API Gateway's proxy event) is
 * handed to it before any HTTP routing.
 */
export function areaHandler(
  area: string,
  modules: readonly AreaModule[],
  adapters: CloudAdapters,
  definitions: Readonly<Record<string, RouteDefinition>>,
  serveAgentRun?: AgentRunServer,
): RestHandler & ((event: AgentRunEvent) => Promise<AgentRunResult>) {
  const module = moduleNamed(modules, area);
  const bound = module.routes
    .filter((r) => r.mode === 'buffered')
    .map((spec) => {
      const definition = definitions[spec.id];
      if (definition === undefined) throw new Error(`Handler for route ${spec.id} is missing from the ${area} function`);
      return { spec, definition, area: module };
    });
  const ports = cloudPlatform([module], modules, adapters);
  const rest = createRestHandler(bound, ports);
  return (async (event: unknown) => {
    if (!isAgentRunEvent(event)) return rest(event as Parameters<RestHandler>[0]);
    if (serveAgentRun === undefined) throw new Error(`The ${area} function runs no agents: invoke the agents function (AGENT_RUNS_FUNCTION_NAME).`);
    return serveAgentRun(event, ports());
  }) as RestHandler & ((event: AgentRunEvent) => Promise<AgentRunResult>);
}

/** The handler of a response-streaming function URL serving `host`'s streaming routes, those of the areas in `modules`. */
export function streamingHandler(
  host: Host,
  modules: readonly AreaModule[],
  adapters: CloudAdapters,
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
  const served = modules.filter((module) => bound.some((b) => b.area === module));
  return createStreamHandler(bound, cloudPlatform(served, modules, adapters));
}

/**
 * The handler of the function running `area`'s schedules: EventBridge Scheduler invokes it with
 * `{ entryPoint }`, the id of the schedule that fired, and its scheduled time in the event's context.
 */
export function scheduleHandler(
  area: string,
  modules: readonly AreaModule[],
  adapters: CloudAdapters,
  definitions: Readonly<Record<string, ScheduleDefinition>>,
): (event: { entryPoint?: unknown }) => Promise<{ outcome: string }> {
  const module = moduleNamed(modules, area);
  const ports = cloudPlatform([module], modules, adapters);
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
    return { outcome: await runSchedule(schedule, ports(), new Date()) };
  };
}

/**
 * The handler of the function consuming `area`'s queues: Lambda's SQS event source invokes it with
 * batches of one queue's messages, and it answers with the ones to retry (adapters/task-queue/aws.ts).
 */
export function queueHandler(
  area: string,
  modules: readonly AreaModule[],
  adapters: QueueAdapters,
  definitions: Readonly<Record<string, QueueDefinition>>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const module = moduleNamed(modules, area);
  const ports = cloudPlatform([module], modules, adapters);
  const queues = entryPointsOf(module, 'queue').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for queue ${spec.id} is missing from the ${area} queue function`);
    return { spec, definition, area: module };
  });
  return adapters.queueConsumer({ queues, ports });
}

/**
 * The handler of the function running `area`'s storage events: S3 invokes it asynchronously with
 * the notification of an object created under one of their prefixes. A failed run throws, so
 * Lambda retries the event (STORAGE_EVENT_ATTEMPTS in all, as the stack configures it).
 */
export function storageEventHandler(
  area: string,
  modules: readonly AreaModule[],
  adapters: CloudAdapters,
  definitions: Readonly<Record<string, StorageEventDefinition>>,
): (event: S3Event) => Promise<void> {
  const module = moduleNamed(modules, area);
  const built = cloudPlatform([module], modules, adapters);
  const bound = entryPointsOf(module, 'storageEvent').map((spec) => {
    const definition = definitions[spec.id];
    if (definition === undefined) throw new Error(`Handler for storage event ${spec.id} is missing from the ${area} storage function`);
    return { spec, definition, area: module };
  });
  return async (event) => {
    const ports = built();
    const failed: string[] = [];
    for (const object of createdObjectsOf(event, { bucketPrefix: ports.config.BUCKET_PREFIX, keys: 'url-encoded' })) {
      for (const entry of storageEventsFor(bound, object)) {
        if ((await runStorageEvent(entry, ports, object)) !== 'succeeded') failed.push(`${entry.spec.id} (${object.key})`);
      }
    }
    if (failed.length > 0) throw new Error(`Storage events failed: ${failed.join(', ')}`);
  };
}
