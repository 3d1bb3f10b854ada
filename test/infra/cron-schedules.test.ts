/**
 * Cron jobs in the cloud: the stack's schedule group, the role EventBridge Scheduler assumes to
 * deliver a due time (which may send to the cron run queue and nothing else), and the cron
 * functions: the API's function manages schedules in that group only and may pass that role only,
 * to Scheduler only; the queue consumer runs the run handler and may mint run tokens; no other
 * function touches Scheduler.
 */
import { describe, expect, it } from 'vitest';
import { json, logicalIdOf, roleStatements, synthPlatform, type TemplateJson } from './synth-platform.ts';

const ofType = (template: TemplateJson, type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const actions = (statement: { Action: string | string[] }) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

describe('cron schedules in the cloud', () => {
  it('has one schedule group and a delivery role that may only send to the run queue, assumed by Scheduler of this account', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const schedules = platform.stack.schedules!;
    const runQueue = platform.stack.taskQueues.queues.get('cron.run-scheduled')!;

    // Act
    const groups = ofType(template, 'AWS::Scheduler::ScheduleGroup');
    const roleId = logicalIdOf(platform, schedules.role);
    const role = template.Resources[roleId]!.Properties!;
    const statements = roleStatements(template, roleId);

    // Assess
    expect(groups).toHaveLength(1);
    expect(JSON.stringify(role['AssumeRolePolicyDocument'])).toContain('scheduler.amazonaws.com');
    expect(JSON.stringify(role['AssumeRolePolicyDocument'])).toContain('aws:SourceAccount');
    expect(statements).toHaveLength(1);
    expect(actions(statements[0]!)).toEqual(['sqs:SendMessage']);
    expect(statements[0]!.Resource).toEqual({ 'Fn::GetAtt': [logicalIdOf(platform, runQueue.queue), 'Arn'] });
  });

  it('lets the cron function manage schedules in the group and pass the delivery role to Scheduler, and no other function', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const cronFn = platform.stack.functions.areas.get('cron')!;
    const roleOf = (fn: { function: { role?: unknown } }) => logicalIdOf(platform, (fn.function as unknown as { role: never }).role);

    // Act
    const statements = roleStatements(template, roleOf(cronFn));
    const passRole = statements.filter((s) => actions(s).includes('iam:PassRole'));
    const scheduler = statements.filter((s) => actions(s).some((a) => a.startsWith('scheduler:')));
    const env = template.Resources[logicalIdOf(platform, cronFn.function)]!.Properties!['Environment'].Variables;
    const others = [...platform.stack.functions.areas].filter(([area]) => area !== 'cron').map(([, fn]) => roleStatements(template, roleOf(fn)));

    // Assess
    expect(passRole).toHaveLength(1);
    expect(passRole[0]!.Resource).toEqual({ 'Fn::GetAtt': [logicalIdOf(platform, platform.stack.schedules!.role), 'Arn'] });
    expect(JSON.stringify(passRole[0])).toContain('scheduler.amazonaws.com');
    expect(scheduler.length).toBeGreaterThan(0);
    const groupName = template.Resources[logicalIdOf(platform, platform.stack.schedules!.group)]!.Properties!['Name'] as string;
    expect(scheduler.every((s) => JSON.stringify(s.Resource).includes(`:schedule/${groupName}/*`))).toBe(true);
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['SCHEDULE_GROUP', 'SCHEDULER_ROLE_ARN', 'SCHEDULE_TARGETS']));
    // No other function touches Scheduler or may pass the delivery role (the code server passes its
    // own instance role to EC2, which is not Scheduler's).
    const deliveryRole = logicalIdOf(platform, platform.stack.schedules!.role);
    for (const statementsOfOther of others) {
      expect(JSON.stringify(statementsOfOther)).not.toMatch(/scheduler:/);
      expect(JSON.stringify(statementsOfOther.filter((s) => actions(s).includes('iam:PassRole')))).not.toContain(deliveryRole);
    }
  });

  it('runs due times in the cron queue consumer, which runs agents through the agents function and mints no run tokens', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const consumer = platform.stack.functions.queueConsumers.get('cron')!;

    // Act
    const props = template.Resources[logicalIdOf(platform, consumer.function)]!.Properties!;
    const mappings = ofType(template, 'AWS::Lambda::EventSourceMapping').filter(([, r]) =>
      JSON.stringify(r.Properties).includes(logicalIdOf(platform, consumer.function)),
    );

    // Assess
    expect(mappings).toHaveLength(1);
    expect(props['Timeout']).toBe(900);
    expect(Object.keys(props['Environment'].Variables)).toEqual(expect.arrayContaining(['AGENT_RUNS_FUNCTION_NAME', 'SCHEDULE_GROUP']));
    expect(Object.keys(props['Environment'].Variables)).not.toContain('RUN_TOKEN_SECRET_ARN');
  });
});
