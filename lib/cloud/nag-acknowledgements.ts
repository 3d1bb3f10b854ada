import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import type { PlatformApi } from './api.ts';
import type { PlatformFunctions } from './area-functions.ts';
import type { AssetDistribution } from './asset-distribution.ts';
import type { PlatformData } from './data-stores.ts';
import type { DeployOptions } from './deploy-options.ts';
import type { PlatformIdentity } from './identity.ts';
import type { RuntimeSchedules } from './runtime-schedules.ts';
import type { ServiceContainers } from './service-containers.ts';
import type { TaskQueues } from './task-queues.ts';
import type { Host } from '../manifest/types.ts';

/**
 * The cdk-nag findings (AwsSolutions and Serverless packs, test/infra/cdk-nag.test.ts) the stack
 * keeps on purpose, each acknowledged on the narrowest construct it concerns, with the reason. An
 * acknowledgement is metadata of CDK itself (`Validations.of(...).acknowledge`): the stack needs no
 * cdk-nag at run time, and the reasons travel with the template.
 */
/** The parts of the platform stack the acknowledgements name (its own type, so this file and the stack do not import each other). */
export interface NagSubject extends Stack {
  readonly api: PlatformApi;
  readonly assetDistributions: ReadonlyMap<Host, AssetDistribution>;
  readonly data: PlatformData;
  readonly functions: PlatformFunctions;
  readonly identity: PlatformIdentity;
  readonly options: DeployOptions;
  readonly schedules: RuntimeSchedules | undefined;
  readonly services: ServiceContainers | undefined;
  readonly taskQueues: TaskQueues;
}

export function acknowledgeNagFindings(stack: NagSubject): void {
  const ack = (scope: IConstruct | undefined, id: string, reason: string) => {
    if (scope !== undefined) Validations.of(scope).acknowledge({ id, reason });
  };

  // The API: the platform authenticates and validates every request itself.
  const api = stack.api;
  const platformAuth =
    'The platform authenticates in its functions (Cognito ID tokens, platform tokens, secret keys, run tokens; auth mode per route in the manifest), the same code as locally; public routes (discovery, embeds, webhooks) must stay open.';
  ack(api, 'AwsSolutions-APIG4', platformAuth);
  ack(api, 'AwsSolutions-COG4', platformAuth);
  ack(
    api,
    'AwsSolutions-APIG2',
    'Every handler validates its body and parameters with zod and answers 400 naming the problem; an API Gateway model would be a second, drifting copy.',
  );
  ack(
    api,
    'AwsSolutions-APIG6',
    "Execution logs would record request and response bodies (tokens, keys, prompts); the access log (deploy option accessLogs) and the functions' own structured logs record each request without them.",
  );

  // What a stage turns off (the dev preset): each finding names the option that turns it back on.
  const { options } = stack;
  if (!options.accessLogs) {
    const off = `Access logs are off in this stage (preset ${options.preset}); the deploy option accessLogs turns them on for the API stage, buckets, distributions and load balancer.`;
    ack(api, 'AwsSolutions-APIG1', off);
    ack(api, 'Serverless-APIGWAccessLogging', off);
    for (const bucket of [...stack.data.buckets.values(), ...[...stack.assetDistributions.values()].map((a) => a.bucket)]) ack(bucket, 'AwsSolutions-S1', off);
    ack(stack.services?.vpc, 'AwsSolutions-VPC7', off);
    for (const host of stack.services?.hosts.values() ?? []) ack(host.loadBalancer, 'AwsSolutions-ELB2', off);
  }
  if (!options.waf) ack(api, 'AwsSolutions-APIG3', `WAF is off in this stage (preset ${options.preset}): the deploy option waf turns it on.`);
  if (options.runTokenRotationDays === 0)
    ack(
      stack.data.runTokenSecret,
      'AwsSolutions-SMG4',
      `Rotation is off in this stage (preset ${options.preset}): the deploy option runTokenRotationDays turns it on.`,
    );

  // Sign-in.
  ack(
    stack.identity.userPool,
    'AwsSolutions-COG2',
    'MFA is optional (TOTP, answered by `agent-platform login --stack`): required MFA would lock out API clients that sign in with a password alone.',
  );
  ack(
    stack.identity.userPool,
    'AwsSolutions-COG8',
    'The Plus feature plan (threat protection) is billed per monthly active user; an operator can switch the pool to it without a stack change.',
  );

  // CloudFront distributions: the widget, users' sites and the voice host.
  const distributions = [
    ...[...stack.assetDistributions.values()].map((a) => a.distribution),
    stack.functions.siteDistribution?.distribution,
    ...[...(stack.services?.hosts.values() ?? [])].map((h) => h.distribution),
  ];
  for (const distribution of distributions) {
    ack(distribution, 'AwsSolutions-CFR1', 'A platform for anyone, anywhere: no country is refused.');
    ack(
      distribution,
      'AwsSolutions-CFR2',
      'A web ACL for CloudFront must be made in us-east-1, which this region-agnostic stack cannot; the API stage has one (deploy option waf), and an operator can attach one made there.',
    );
    ack(
      distribution,
      'AwsSolutions-CFR3',
      'Standard logging is set by lib/cloud/guardrails.ts (AccessLogBucket) as a property override, which cdk-nag does not read, when the deploy option accessLogs is on (the prod preset); test/infra/deploy-options.test.ts checks the template has it.',
    );
    ack(
      distribution,
      'AwsSolutions-CFR4',
      'Without a custom domain the distribution uses its *.cloudfront.net certificate, whose protocol policy CloudFront fixes; with the domainName option the certificate is ours and the minimum is TLS 1.2 (2021).',
    );
  }

  // The voice service.
  for (const host of stack.services?.hosts.values() ?? []) {
    ack(
      host.taskDefinition,
      'AwsSolutions-ECS2',
      'The variables are names, ARNs and URLs of the stack (tables, functions, hosts), no secret: secrets are read from Secrets Manager and KMS at run time.',
    );
    ack(
      host.originSecret,
      'AwsSolutions-SMG4',
      'Rotating the origin secret means changing the distribution and the listener rule together: a deploy does both (replace the secret), a rotation function could not.',
    );
  }
  ack(
    stack.services?.cluster,
    'AwsSolutions-ECS4',
    "Container Insights is billed per metric; the service's load balancer and task metrics (the scaling policy's) are in CloudWatch already.",
  );

  // Queues: the dead-letter queues of the task queues and the storage events' failure queues are the end of the line.
  const deadLetter = 'A dead-letter or failure queue: where failed messages end, kept 14 days; a queue behind it would only move them.';
  for (const queue of [...stack.functions.storageEventFailures.values(), ...[...stack.taskQueues.queues.values()].map((q) => q.deadLetter)]) {
    ack(queue, 'AwsSolutions-SQS3', deadLetter);
    ack(queue, 'Serverless-SQSRedrivePolicy', deadLetter);
  }

  // IAM: cdk-nag v3 wants each finding acknowledged by its own id, so they are listed from the stack.
  const managed = 'An AWS managed policy scoped to its purpose: a function writing its own logs, API Gateway writing access logs.';
  for (const policy of ['service-role/AWSLambdaBasicExecutionRole', 'service-role/AmazonAPIGatewayPushToCloudWatchLogs'])
    ack(stack, `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policy}]`, managed);
  const arnOf = (construct: IConstruct) => `<${stack.getLogicalId(construct.node.defaultChild as CfnElement)}.Arn>`;
  const scoped = (what: string) => `CDK's grant on ${what} of this stack: the wildcard stays inside that one resource.`;
  for (const [name, table] of stack.data.tables) ack(stack, `AwsSolutions-IAM5[Resource::${arnOf(table)}/index/*]`, scoped(`the indexes of table ${name}`));
  const buckets = [...stack.data.buckets, ...[...stack.assetDistributions].map(([host, a]) => [`${host} assets`, a.bucket] as const)];
  for (const [name, bucket] of buckets) ack(stack, `AwsSolutions-IAM5[Resource::${arnOf(bucket)}/*]`, scoped(`the objects of bucket ${name}`));
  for (const action of ['s3:Abort*', 's3:DeleteObject*', 's3:GetBucket*', 's3:GetObject*', 's3:List*'])
    ack(
      stack,
      `AwsSolutions-IAM5[Action::${action}]`,
      "The action groups of CDK's bucket grants (read, write, delete of objects), on the granted bucket only.",
    );
  // Invoking a function (a grant, a schedule's target) covers its versions and aliases: `<arn>:*`.
  for (const fn of stack.node.findAll().filter((c): c is CfnFunction => c instanceof CfnFunction && Stack.of(c) === stack))
    ack(stack, `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn)}.Arn>:*]`, scoped('the versions and aliases of a function it invokes'));
  // code server (engineer I, issue 36): EventBridge Scheduler invokes the manifest's schedule functions (the billing tick)
  for (const fn of stack.functions.schedules.values())
    ack(stack, `AwsSolutions-IAM5[Resource::${arnOf(fn.function)}:*]`, scoped('the versions and aliases of a scheduled function invoked'));
  ack(
    stack,
    'AwsSolutions-IAM5[Resource::*]',
    "Actions without resource-level permissions: X-Ray PutTraceSegments and PutTelemetryRecords, ec2:Describe*, and CDK's own deploy-time helpers.",
  );
  ack(
    stack,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]',
    'The CDK bootstrap bucket the bucket deployment copies the widget from.',
  );
  if (stack.schedules !== undefined)
    ack(
      stack,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${stack.resolve(stack.schedules.group.scheduleGroupName) as string}/*]`,
      scoped('the schedules of the run-time schedule group'),
    );
  const pinned =
    "Runtimes are pinned on purpose: Node 22 for the platform (its bundles target node22), Python 3.12 for user code (the sandbox is built for it); CDK's own helper functions use the runtime CDK chooses.";
  ack(stack, 'AwsSolutions-L1', pinned);
  ack(stack, 'Serverless-LambdaLatestVersion', pinned);
  ack(
    stack,
    'Serverless-LambdaDLQ',
    'API, function-URL and runtime functions are invoked synchronously (the caller sees the error); queue consumers use the SQS dead-letter queues and storage events an on-failure destination.',
  );
  ack(
    stack,
    'Serverless-LambdaEventSourceMappingDestination',
    "A task that keeps failing goes to its queue's dead-letter queue through the redrive policy after maxAttempts receives.",
  );
  ack(stack, 'Serverless-LambdaDefaultMemorySize', 'The 404 fallback and the rotation function do almost nothing; 128 MB is enough and the cheapest.');
  ack(
    stack,
    'Serverless-LambdaTracing',
    "CDK's own helper functions (custom resources, bucket deployments) run at deploy time only; the platform's functions trace with X-Ray.",
  );
}
