/**
 * Code servers in the cloud (issue 36): the `code-servers` table with its sparse billing index,
 * the billing tick as an EventBridge Scheduler schedule every 5 minutes, the instances' network,
 * security group and SSM instance profile, and the `machines` grants on the code-server area's
 * functions alone (EC2 scoped by the purpose tag, SSM commands, the setup parameters).
 */
import { describe, expect, it } from 'vitest';
import { json, logicalIdOf, platformFunctions, roleStatements, synthPlatform } from './synth-platform.ts';

const actionsOf = (statements: { Action: string | string[] }[]) => statements.flatMap((s) => [s.Action].flat());

describe('code servers in the cloud', () => {
  it('keep one item per user in a table with a sparse billing index', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    const tables = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::DynamoDB::Table' && JSON.stringify(r.Properties?.['TableName'] ?? '').includes('code-servers'),
    );

    // Assess
    expect(tables).toHaveLength(1);
    expect(tables[0]!.Properties!['KeySchema']).toEqual([{ AttributeName: 'userId', KeyType: 'HASH' }]);
    expect(tables[0]!.Properties!['GlobalSecondaryIndexes']).toEqual([
      expect.objectContaining({
        IndexName: 'byBilling',
        KeySchema: [
          { AttributeName: 'billing', KeyType: 'HASH' },
          { AttributeName: 'userId', KeyType: 'RANGE' },
        ],
      }),
    ]);
  });

  it('bill on an EventBridge Scheduler schedule every 5 minutes, invoking the area schedule function', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const fn = platform.stack.functions.schedules.get('code-server');

    // Act
    const schedules = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && JSON.stringify(r.Properties?.['Target']?.Input ?? '').includes('code-server.billing-tick'),
    );

    // Assess
    expect(fn).toBeDefined();
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Target: { Arn: { 'Fn::GetAtt': [logicalIdOf(platform, fn!.function), 'Arn'] } },
    });
  });

  it('give instances a security group opening only the IDE port and an instance profile with the SSM agent policy', () => {
    // Prepare
    const template = json(synthPlatform().main);
    const resources = Object.entries(template.Resources);

    // Act
    const groups = resources.filter(([, r]) => r.Type === 'AWS::EC2::SecurityGroup' && String(r.Properties?.['GroupDescription']).startsWith('Code server'));
    const profiles = resources.filter(([, r]) => r.Type === 'AWS::IAM::InstanceProfile');
    const roleRef = profiles[0]?.[1].Properties?.['Roles'][0] as { Ref: string } | undefined;
    const role = roleRef === undefined ? undefined : template.Resources[roleRef.Ref];
    const instanceStatements = roleRef === undefined ? [] : roleStatements(template, roleRef.Ref);

    // Assess
    expect(groups).toHaveLength(1);
    expect(groups[0]![1].Properties!['SecurityGroupIngress']).toEqual([expect.objectContaining({ FromPort: 8443, ToPort: 8443, IpProtocol: 'tcp' })]);
    expect(profiles).toHaveLength(1);
    expect(JSON.stringify(role?.Properties?.['AssumeRolePolicyDocument'])).toContain('ec2.amazonaws.com');
    expect(JSON.stringify(role?.Properties?.['ManagedPolicyArns'])).toContain('AmazonSSMManagedInstanceCore');
    expect(actionsOf(instanceStatements).sort()).toEqual(['ssm:DeleteParameter', 'ssm:GetParameter']);
    expect(JSON.stringify(instanceStatements)).toContain('parameter/code-server/setup/*');
  });

  it('grant EC2 and SSM to the code-server functions only, stopping and terminating only tagged instances', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const areaFn = platform.stack.functions.areas.get('code-server')!;
    const scheduleFn = platform.stack.functions.schedules.get('code-server')!;
    const own = new Set([areaFn, scheduleFn].map((f) => logicalIdOf(platform, f.function.role!)));

    // Act
    const ownStatements = [...own].map((role) => roleStatements(template, role));
    const others = platformFunctions(platform)
      .map(([, fn]) => (fn.Properties?.['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])
      .filter((role) => !own.has(role))
      .filter((role) => actionsOf(roleStatements(template, role)).some((a) => a.startsWith('ec2:') || a === 'ssm:SendCommand'));
    const environment = template.Resources[logicalIdOf(platform, areaFn.function)]!.Properties!['Environment'].Variables;

    // Assess
    for (const statements of ownStatements) {
      const actions = actionsOf(statements);
      for (const action of ['ec2:RunInstances', 'ec2:StopInstances', 'ec2:StartInstances', 'ec2:TerminateInstances', 'ec2:DescribeInstances'])
        expect(actions).toContain(action);
      for (const action of ['ssm:SendCommand', 'ssm:GetCommandInvocation', 'ssm:PutParameter', 'iam:PassRole']) expect(actions).toContain(action);
      const drive = statements.find((s) => [s.Action].flat().includes('ec2:TerminateInstances')) as { Condition?: unknown } | undefined;
      expect(drive?.Condition).toEqual({ StringEquals: { 'aws:ResourceTag/platform:purpose': 'code-server' } });
    }
    expect(others).toEqual([]);
    expect(environment).toMatchObject({
      CODE_SERVER_BACKEND: 'ec2',
      CODE_SERVER_SECURITY_GROUP_ID: expect.anything(),
      CODE_SERVER_INSTANCE_PROFILE: expect.anything(),
    });
  });
});
