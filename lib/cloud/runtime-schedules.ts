import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { Config } from '../../functions/core/config.ts';
import type { TaskQueues } from './task-queues.ts';

const GROUP = 'SCHEDULE_GROUP' satisfies keyof Config;
const ROLE = 'SCHEDULER_ROLE_ARN' satisfies keyof Config;
const TARGETS = 'SCHEDULE_TARGETS' satisfies keyof Config;

export interface RuntimeSchedulesProps {
  readonly taskQueues: TaskQueues;
  /** Areas declaring the `schedules` port: their schedules may send to their own queues. */
  readonly areas: ReadonlySet<string>;
}

/**
 * Where run-time schedules (cron jobs) live in the cloud: one EventBridge Scheduler group of the
 * stack, and the role Scheduler assumes to deliver a due time, which may send to the queues of the
 * areas declaring `schedules` and nothing else. A function managing schedules may create, change
 * and delete schedules in this group only, and pass this role only, to Scheduler only.
 */
export class RuntimeSchedules extends Construct {
  readonly group: ScheduleGroup;
  readonly role: Role;
  private readonly props: RuntimeSchedulesProps;

  constructor(scope: Construct, id: string, props: RuntimeSchedulesProps) {
    super(scope, id);
    this.props = props;
    this.group = new ScheduleGroup(this, 'Group', {});
    this.role = new Role(this, 'DeliveryRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        // Only schedules of this account may assume it (AWS's confused-deputy advice for Scheduler).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'EventBridge Scheduler delivering cron due times to the run queues',
    });
    for (const q of this.targets()) q.queue.grant(this.role, 'sqs:SendMessage');
  }

  /**
   * Lets `grantee` manage the schedules of `areas` (those it serves declaring `schedules`):
   * schedule writes and deletes in the group and `iam:PassRole` of the delivery role to Scheduler.
   * Returns the variables of the adapter (functions/adapters/schedules/aws.ts), none for no areas.
   */
  grantManage(grantee: IGrantable, areas: ReadonlySet<string>): Record<string, string> {
    const targets = this.targets().filter((q) => areas.has(q.spec.area));
    if (targets.length === 0) return {};
    this.group.grantReadSchedules(grantee);
    this.group.grantWriteSchedules(grantee);
    this.group.grantDeleteSchedules(grantee);
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    return {
      [GROUP]: this.group.scheduleGroupName,
      [ROLE]: this.role.roleArn,
      [TARGETS]: Stack.of(this).toJsonString(Object.fromEntries(targets.map((q) => [q.spec.id, q.queue.queueArn]))),
    };
  }

  private targets() {
    return [...this.props.taskQueues.queues.values()].filter((q) => this.props.areas.has(q.spec.area));
  }
}
