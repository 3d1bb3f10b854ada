/**
 * Queues and storage events in the cloud, with the sample area (a route, a schedule, a queue and a
 * storage event, declaring `tasks`) and a neighbour area with a queue of its own: one SQS queue and
 * dead-letter queue per queue entry point, one consumer per area fed by an event source with partial
 * batch responses, one storage function per area notified by its bucket for its prefix; and SQS
 * permissions only where declared: the consumer reads its area's queues, the declaring area's
 * functions send to that area's queues only, and no other function may touch SQS at all.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { CFN_LINT_MISSING, cfnLint, HAS_CFN_LINT } from '../support/cfn-lint.ts';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import { areas, type AreaModule } from '../../lib/manifest/index.ts';
import { neighbourArea, sampleArea } from '../fixtures/sample-area/sample.module.ts';
import { cdkJsonContext, withScratchOutdir, type TemplateJson } from './synth-platform.ts';

// .tmp/ is made by the first synth; in a fresh checkout this file may come first.
mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
const scratchEntries = mkdtempSync(join(REPO_ROOT, '.tmp', 'async-entries-'));
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

function synth(modules: readonly AreaModule[]) {
  return withScratchOutdir((outdir) => {
    const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new PlatformStack(app, 'async-test', { stage: 'test', version: '0', areas: modules, entriesDir: scratchEntries });
    const template = Template.fromStack(stack).toJSON() as TemplateJson;
    return { stack, template, id: (c: IConstruct) => stack.getLogicalId(c.node.defaultChild as CfnElement) };
  });
}

let cached: ReturnType<typeof synth> | undefined;
const withSample = () => (cached ??= synth([...areas.filter((area) => area.name !== 'voice'), sampleArea, neighbourArea]));

const ofType = (template: TemplateJson, type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

describe('queue entry points in the cloud', () => {
  it('get a queue each, redriven to a dead-letter queue after maxAttempts, encrypted, with a visibility timeout six times the consumer’s', () => {
    // Prepare
    const { stack, template, id } = withSample();
    const sample = stack.taskQueues.queues.get('sample.file-note')!;
    const consumer = stack.functions.queueConsumers.get('sample')!;

    // Act
    const queues = ofType(template, 'AWS::SQS::Queue');
    const props = template.Resources[id(sample.queue)]!.Properties;
    const deadLetterProps = template.Resources[id(sample.deadLetter)]!.Properties;
    const consumerTimeout = template.Resources[id(consumer.function)]!.Properties!['Timeout'];

    // Assess
    // The sample's two, the neighbour's two, and the cron and channels areas' queues with their dead
    // letters; and one failure queue per area with storage events (the sample, knowledge, websites).
    expect(queues).toHaveLength(8 + stack.functions.storageEventFailures.size);
    expect([...stack.functions.storageEventFailures.keys()].sort()).toEqual(['knowledge', 'sample', 'websites']);
    expect(props).toMatchObject({
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [id(sample.deadLetter), 'Arn'] }, maxReceiveCount: 3 },
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 86_400,
      MaximumMessageSize: 262_144,
      VisibilityTimeout: 6 * consumerTimeout,
    });
    expect(consumerTimeout).toBe(13);
    expect(deadLetterProps).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    expect(template.Resources[id(stack.taskQueues.queues.get('neighbour.file-note')!.queue)]!.Properties).toMatchObject({
      RedrivePolicy: { maxReceiveCount: 2 },
    });
  });

  it("feed one consumer per area through an event source with partial batch responses, built from an entry binding the area's queues", () => {
    // Prepare
    const { stack, template, id } = withSample();
    const consumer = stack.functions.queueConsumers.get('sample')!;

    // Act
    const mappings = ofType(template, 'AWS::Lambda::EventSourceMapping').map(([, r]) => r.Properties!);
    const entry = readFileSync(join(scratchEntries, 'queue-sample.entry.ts'), 'utf8');
    const env = template.Resources[id(consumer.function)]!.Properties!['Environment'].Variables;

    // Assess
    expect([...stack.functions.queueConsumers.keys()].sort()).toEqual(['channels', 'cron', 'neighbour', 'sample']);
    expect(mappings).toHaveLength(4);
    expect(mappings).toContainEqual(
      expect.objectContaining({
        EventSourceArn: { 'Fn::GetAtt': [id(stack.taskQueues.queues.get('sample.file-note')!.queue), 'Arn'] },
        FunctionName: { Ref: id(consumer.function) },
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      }),
    );
    expect(entry).toContain('queueHandler("sample"');
    expect(entry).toContain('test/fixtures/sample-area/handlers/file-note.queue.ts');
    expect(JSON.stringify(env['TASK_QUEUES'])).toContain(id(stack.taskQueues.queues.get('sample.file-note')!.queue));
    expect(JSON.stringify(env['TASK_DEAD_LETTER_QUEUES'])).toContain(id(stack.taskQueues.queues.get('sample.file-note')!.deadLetter));
  });

  it('let only the consumer read a queue, only the declaring area’s functions send to it, and no other function touch SQS', () => {
    // Prepare
    const { stack, template, id } = withSample();
    const functions = stack.functions;
    const roleOf = new Map<string, string>();
    const name = (label: string, fn: { function: { role?: IConstruct | undefined } } | undefined) => roleOf.set(id(fn!.function.role!), label);
    name('sample area', functions.areas.get('sample'));
    name('sample schedule', functions.schedules.get('sample'));
    name('sample consumer', functions.queueConsumers.get('sample'));
    name('sample storage', functions.storageEvents.get('sample'));
    name('knowledge storage', functions.storageEvents.get('knowledge'));
    name('websites storage', functions.storageEvents.get('websites'));
    name('neighbour consumer', functions.queueConsumers.get('neighbour'));
    name('cron consumer', functions.queueConsumers.get('cron'));
    name('channels area', functions.areas.get('channels'));
    name('channels consumer', functions.queueConsumers.get('channels'));
    roleOf.set(id(stack.schedules!.role), 'cron schedule delivery');
    roleOf.set(id(stack.services!.hosts.get('voice')!.taskDefinition.taskRole), 'sample voice service');
    const queueName = new Map<string, string>();
    for (const [entry, q] of stack.taskQueues.queues) {
      queueName.set(id(q.queue), entry);
      queueName.set(id(q.deadLetter), `${entry} (dead letters)`);
    }
    for (const [area, q] of functions.storageEventFailures) queueName.set(id(q), `${area} (storage failures)`);
    // Lambda's on-failure destination: the storage function sends the events it gave up on.
    const failures = (area: string) => ['GetQueueAttributes', 'GetQueueUrl', 'SendMessage'].map((a) => `sqs:${a} ${area} (storage failures)`);

    // Act: every SQS action of every role's policies, with the queues it names
    const grants: Record<string, string[]> = {};
    for (const [, policy] of ofType(template, 'AWS::IAM::Policy')) {
      for (const roleRef of policy.Properties!['Roles'] as { Ref: string }[]) {
        for (const statement of policy.Properties!['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown }[]) {
          const actions = [statement.Action].flat().filter((a) => a.startsWith('sqs:'));
          const named = [...JSON.stringify(statement.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => queueName.get(m[1]!)).filter((n) => n !== undefined);
          const who = roleOf.get(roleRef.Ref) ?? `other role ${roleRef.Ref}`;
          for (const action of actions) for (const queue of named.length > 0 ? named : ['(any queue)']) (grants[who] ??= []).push(`${action} ${queue}`);
        }
      }
    }
    for (const list of Object.values(grants)) list.sort();
    const consume = (queue: string) =>
      ['ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl', 'ReceiveMessage'].map((a) => `sqs:${a} ${queue}`);

    // Assess
    expect(grants).toEqual({
      'sample area': ['sqs:SendMessage sample.file-note'],
      'sample schedule': ['sqs:SendMessage sample.file-note'],
      'sample storage': ['sqs:SendMessage sample.file-note', ...failures('sample')].sort(),
      'knowledge storage': failures('knowledge'),
      'websites storage': failures('websites'),
      'sample voice service': ['sqs:SendMessage sample.file-note'],
      'sample consumer': [...consume('sample.file-note'), 'sqs:SendMessage sample.file-note', 'sqs:SendMessage sample.file-note (dead letters)'].sort(),
      'neighbour consumer': [
        ...consume('neighbour.file-note'),
        'sqs:SendMessage neighbour.file-note',
        'sqs:SendMessage neighbour.file-note (dead letters)',
      ].sort(),
      // EventBridge Scheduler's role sends due times to the run queue (test/infra/cron-schedules.test.ts).
      'cron schedule delivery': ['sqs:SendMessage cron.run-scheduled'],
      'cron consumer': [...consume('cron.run-scheduled'), 'sqs:SendMessage cron.run-scheduled (dead letters)'].sort(),
      // Inbound deliveries hand the agent run to the channels area's queue (issue 18).
      'channels area': ['sqs:SendMessage channels.deliver-reply'],
      'channels consumer': [
        ...consume('channels.deliver-reply'),
        'sqs:SendMessage channels.deliver-reply',
        'sqs:SendMessage channels.deliver-reply (dead letters)',
      ].sort(),
    });
  });
});

describe('storage events in the cloud', () => {
  it("notify the area's storage function of objects created under the prefix, retried as the local platform retries", () => {
    // Prepare
    const { stack, template, id } = withSample();
    const fn = stack.functions.storageEvents.get('sample')!;

    // Act
    // The blobs bucket's: other areas' buckets (the knowledge area's) notify their own functions.
    const notifications = ofType(template, 'Custom::S3BucketNotifications')
      .map(([, r]) => r.Properties!)
      .filter((p) => JSON.stringify(p['BucketName']) === JSON.stringify({ Ref: id(stack.data.buckets.get('blobs')!) }));
    const invokeConfigs = ofType(template, 'AWS::Lambda::EventInvokeConfig').map(([, r]) => r.Properties!);
    const permissions = ofType(template, 'AWS::Lambda::Permission').map(([, r]) => r.Properties!);
    const entry = readFileSync(join(scratchEntries, 'storage-sample.entry.ts'), 'utf8');

    // Assess
    expect(notifications).toHaveLength(1);
    expect(notifications[0]).toMatchObject({
      BucketName: { Ref: id(stack.data.buckets.get('blobs')!) },
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'sample-inbox/' }] } },
            LambdaFunctionArn: { 'Fn::GetAtt': [id(fn.function), 'Arn'] },
          },
        ],
      },
    });
    expect(invokeConfigs).toContainEqual(expect.objectContaining({ FunctionName: { Ref: id(fn.function) }, MaximumRetryAttempts: 2 }));
    expect(permissions).toContainEqual(
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Principal: 's3.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [id(fn.function), 'Arn'] },
        SourceArn: { 'Fn::GetAtt': [id(stack.data.buckets.get('blobs')!), 'Arn'] },
      }),
    );
    expect(entry).toContain('storageEventHandler("sample"');
    expect(entry).toContain('test/fixtures/sample-area/handlers/index-upload.storage.ts');
  });

  it('refuse at synth a storage event on a bucket no module declares', () => {
    // Prepare
    const stray = defineArea({
      name: 'stray',
      folder: 'test/fixtures/sample-area',
      entryPoints: [{ kind: 'storageEvent', handler: 'index-upload', bucket: 'photos', prefix: 'in/' }],
      uses: ['tasks'],
    });

    // Act
    const synthesize = () => synth([...areas, stray]);

    // Assess
    expect(synthesize).toThrow('Storage event stray.index-upload watches bucket "photos", which no area module declares');
  });
});

describe('the template with queues and storage events', () => {
  it.skipIf(!HAS_CFN_LINT)(HAS_CFN_LINT ? 'passes cfn-lint without errors' : `passes cfn-lint (${CFN_LINT_MISSING})`, () => {
    // Prepare
    const { template } = withSample();
    const dir = mkdtempSync(join(tmpdir(), 'async-lint-'));
    const file = join(dir, 'main.template.json');
    writeFileSync(file, JSON.stringify(template));

    // Act
    const run = cfnLint([file]);
    rmSync(dir, { recursive: true, force: true });
    const findings = run.findings;

    // Assess
    expect(run.error).toBeUndefined();
    expect(findings.filter((f) => f.Level === 'Error').map((f) => `${f.Rule.Id} ${f.Message}`)).toEqual([]);
  });
});

describe('channels in the cloud', () => {
  it('hand inbound replies to a queue delivered once, and take platform deliveries with no authorizer in front', () => {
    // Prepare
    const { stack, template, id } = withSample();
    const replies = stack.taskQueues.queues.get('channels.deliver-reply')!;
    const channels = areas.find((area) => area.name === 'channels')!;

    // Act
    const props = template.Resources[id(replies.queue)]!.Properties;
    const inbound = channels.routes.filter((route) => route.path.startsWith('/channels/inbound/'));
    const authorizers = ofType(template, 'AWS::ApiGateway::Authorizer');

    // Assess: platforms hold no user credential; their signature is checked in the function
    expect(props).toMatchObject({ RedrivePolicy: { maxReceiveCount: 1 } });
    expect(inbound.map((route) => `${route.method} ${route.auth}`).sort()).toEqual(['GET public', 'GET public', 'POST public', 'POST public']);
    expect(authorizers).toEqual([]);
  });
});
