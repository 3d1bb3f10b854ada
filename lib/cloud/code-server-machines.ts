import { Arn, ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { CfnSecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { CfnInstanceProfile, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CODE_SERVER_PORT, SETUP_PARAMETER_PREFIX } from '../../functions/adapters/machines/aws.ts';

/** The tag every code server instance carries, so the functions may stop, start and terminate only those. */
const PURPOSE_TAG = { key: 'platform:purpose', value: 'code-server' } as const;

/**
 * Where users' code servers run (issue 36, decision 0044): the account's default VPC (its public
 * subnets give each instance the public address it installs code-server and reaches SSM through,
 * with no NAT to pay for), a security group there opening only the IDE's HTTPS port, and an
 * instance profile with SSM's agent policy plus reading and deleting its setup runs' environment.
 * `grant` gives a function what the `machines` port does.
 */
export class CodeServerMachines extends Construct {
  readonly securityGroup: CfnSecurityGroup;
  readonly role: Role;
  readonly instanceProfile: CfnInstanceProfile;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // No VpcId: CloudFormation makes it in the default VPC, where RunInstances without a subnet launches.
    this.securityGroup = new CfnSecurityGroup(this, 'InstanceSecurityGroup', {
      groupDescription: 'Code server instances: the IDE over HTTPS only (no SSH: shell access is through SSM)',
      securityGroupIngress: [
        {
          ipProtocol: 'tcp',
          fromPort: CODE_SERVER_PORT,
          toPort: CODE_SERVER_PORT,
          cidrIp: '0.0.0.0/0',
          description: 'code-server IDE over TLS (password required)',
        },
      ],
    });
    this.role = new Role(this, 'InstanceRole', {
      assumedBy: new ServicePrincipal('ec2.amazonaws.com'),
      description: 'Code server instances: the SSM agent, and their own setup environment',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    // Names carry the instance id and a random UUID and live until the run reads them: an instance
    // can read only a name it was sent (no listing is granted).
    this.role.addToPolicy(new PolicyStatement({ actions: ['ssm:GetParameter', 'ssm:DeleteParameter'], resources: [this.setupParameters()] }));
    this.instanceProfile = new CfnInstanceProfile(this, 'InstanceProfile', { roles: [this.role.roleName] });
    const ack = (id: string, reason: string) => Validations.of(this).acknowledge({ id, reason });
    ack(
      'AwsSolutions-EC23',
      "The IDE is reached by users' browsers from anywhere, over TLS and behind the launch's password (decision 0044); nothing else is open.",
    );
    ack(
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      "The SSM agent's own managed policy: what lets the platform run setup scripts without SSH.",
    );
  }

  /** Every setup run's environment parameter (`/code-server/setup/{instanceId}/{uuid}`). */
  private setupParameters(): string {
    return Arn.format(
      { service: 'ssm', resource: 'parameter', resourceName: `${SETUP_PARAMETER_PREFIX.slice(1)}*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
      Stack.of(this),
    );
  }

  /** What the `machines` port does from `fn`: launch, drive and describe code server instances, and send their setup runs. */
  grant(fn: IFunction): void {
    const stack = Stack.of(this);
    const instances = Arn.format({ service: 'ec2', resource: 'instance', resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, stack);
    const tagged = { StringEquals: { [`aws:ResourceTag/${PURPOSE_TAG.key}`]: PURPOSE_TAG.value } };
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'LaunchCodeServers',
        actions: ['ec2:RunInstances'],
        resources: [
          `arn:${stack.partition}:ec2:${stack.region}::image/*`,
          instances,
          Arn.format({ service: 'ec2', resource: 'volume', resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, stack),
          Arn.format({ service: 'ec2', resource: 'network-interface', resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, stack),
          Arn.format({ service: 'ec2', resource: 'subnet', resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, stack),
          Arn.format(
            { service: 'ec2', resource: 'security-group', resourceName: this.securityGroup.attrGroupId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
            stack,
          ),
        ],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'TagCodeServersAtLaunch',
        actions: ['ec2:CreateTags'],
        resources: ['*'],
        conditions: { StringEquals: { 'ec2:CreateAction': 'RunInstances' } },
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'DriveCodeServers',
        actions: ['ec2:StartInstances', 'ec2:StopInstances', 'ec2:TerminateInstances'],
        resources: [instances],
        conditions: tagged,
      }),
    );
    // DescribeInstances supports no resource-level permission.
    fn.addToRolePolicy(new PolicyStatement({ sid: 'DescribeCodeServers', actions: ['ec2:DescribeInstances'], resources: ['*'] }));
    fn.addToRolePolicy(new PolicyStatement({ sid: 'PassCodeServerRole', actions: ['iam:PassRole'], resources: [this.role.roleArn] }));
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'FindCodeServerImage',
        actions: ['ssm:GetParameter'],
        resources: [`arn:${stack.partition}:ssm:${stack.region}::parameter/aws/service/ami-amazon-linux-latest/*`],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SetupEnvironment',
        actions: ['ssm:PutParameter', 'ssm:DeleteParameter', 'ssm:DeleteParameters', 'ssm:GetParametersByPath'],
        resources: [
          this.setupParameters(),
          Arn.format(
            { service: 'ssm', resource: 'parameter', resourceName: SETUP_PARAMETER_PREFIX.slice(1, -1), arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
            stack,
          ),
        ],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SendSetupCommands',
        actions: ['ssm:SendCommand'],
        resources: [`arn:${stack.partition}:ssm:${stack.region}::document/AWS-RunShellScript`, instances],
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ sid: 'ReadSetupCommands', actions: ['ssm:GetCommandInvocation'], resources: ['*'] }));
    const wildcards = [
      ...['instance/*', 'volume/*', 'network-interface/*', 'subnet/*'].map((r) => `arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:${r}`),
      'arn:<AWS::Partition>:ec2:<AWS::Region>::image/*',
      'arn:<AWS::Partition>:ssm:<AWS::Region>::parameter/aws/service/ami-amazon-linux-latest/*',
      `arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter${SETUP_PARAMETER_PREFIX}*`,
    ];
    for (const resource of wildcards)
      Validations.of(stack).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason:
          'Code server instances are made at run time, so their ARNs are not known: launching is limited to the AMI parameter and the instance profile, and stop, start and terminate to instances tagged platform:purpose=code-server.',
      });
    for (const [name, value] of Object.entries({
      CODE_SERVER_BACKEND: 'ec2',
      CODE_SERVER_SECURITY_GROUP_ID: this.securityGroup.attrGroupId,
      CODE_SERVER_INSTANCE_PROFILE: this.instanceProfile.ref,
    }))
      addEnvironment(fn, name, value);
  }
}

function addEnvironment(fn: IFunction, name: string, value: string): void {
  const withEnvironment = fn as IFunction & { addEnvironment?: (name: string, value: string) => unknown };
  if (withEnvironment.addEnvironment === undefined) throw new Error(`Function ${fn.node.path} takes no environment variables.`);
  withEnvironment.addEnvironment(name, value);
}
