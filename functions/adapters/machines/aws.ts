import { randomUUID } from 'node:crypto';
import type * as Ec2Sdk from '@aws-sdk/client-ec2';
import type * as SsmSdk from '@aws-sdk/client-ssm';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { Machine, MachineLaunch, MachineState, Machines, SetupRun } from '../../code-server/machines.ts';
import { ConfigError } from '../../core/config.ts';
import { NotFoundError } from '../../core/errors.ts';

/** The port code-server listens on, with its own TLS certificate (`cert: true`). */
export const CODE_SERVER_PORT = 8443;

/** Where a setup run's environment waits for the instance to read it once (SecureString parameters under it). */
export const SETUP_PARAMETER_PREFIX = '/code-server/setup/';

export interface AwsMachinesSettings {
  readonly AWS_REGION: string;
  readonly AWS_ENDPOINT_URL_EC2?: string | undefined;
  readonly AWS_ENDPOINT_URL_SSM?: string | undefined;
  readonly CODE_SERVER_AMI_PARAMETER: string;
  readonly CODE_SERVER_SUBNET_ID?: string | undefined;
  readonly CODE_SERVER_SECURITY_GROUP_ID?: string | undefined;
  readonly CODE_SERVER_INSTANCE_PROFILE?: string | undefined;
}

/**
 * The first-boot script: code-server from its release tarball, listening with TLS on 8443 and
 * requiring the launch's password. The password is the instance's own (its user data is readable
 * only by the account and by root on the instance); nothing else secret is in it.
 */
export function userData(password: string): string {
  const config = ['bind-addr: 0.0.0.0:' + String(CODE_SERVER_PORT), 'auth: password', `password: ${JSON.stringify(password)}`, 'cert: true'].join('\n');
  const script = [
    '#!/bin/bash',
    'set -euo pipefail',
    'dnf install -y git tar gzip',
    'curl -fsSL https://code-server.dev/install.sh | sh -s -- --method=standalone --prefix=/usr/local',
    'install -d -o ec2-user -g ec2-user -m 700 /home/ec2-user/.config/code-server',
    "cat > /home/ec2-user/.config/code-server/config.yaml <<'CONFIG'",
    config,
    'CONFIG',
    'chown ec2-user:ec2-user /home/ec2-user/.config/code-server/config.yaml',
    'chmod 600 /home/ec2-user/.config/code-server/config.yaml',
    "cat > /etc/systemd/system/code-server.service <<'UNIT'",
    '[Unit]',
    'Description=code-server',
    'After=network-online.target',
    '[Service]',
    'User=ec2-user',
    'ExecStart=/usr/local/bin/code-server',
    'Restart=always',
    '[Install]',
    'WantedBy=multi-user.target',
    'UNIT',
    'systemctl daemon-reload',
    'systemctl enable --now code-server',
  ];
  return Buffer.from(script.join('\n') + '\n', 'utf8').toString('base64');
}

/** `value` as one single-quoted shell word. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The setup command's text: it reads the environment from its SecureString parameter (the
 * instance profile may read and delete `/code-server/setup/*`), deletes it, and runs the script as
 * `ec2-user` with it. Only the parameter's name is in the text, so the values are in no command
 * listing, SSM output or CloudTrail entry.
 */
export function setupCommands(parameterName: string, region: string, script: string): string[] {
  const encoded = Buffer.from(script, 'utf8').toString('base64');
  return [
    'set -euo pipefail',
    'umask 077',
    'ENV_FILE=$(mktemp)',
    `aws ssm get-parameter --region ${region} --name ${shellQuote(parameterName)} --with-decryption --query Parameter.Value --output text > "$ENV_FILE"`,
    `aws ssm delete-parameter --region ${region} --name ${shellQuote(parameterName)} || true`,
    'SCRIPT_FILE=$(mktemp)',
    `echo ${encoded} | base64 -d > "$SCRIPT_FILE"`,
    'chown ec2-user:ec2-user "$ENV_FILE" "$SCRIPT_FILE"',
    'cd /home/ec2-user',
    'status=0; sudo -u ec2-user -H bash -c \'set -a; . "$0"; rm -f "$0"; set +a; exec bash "$1"\' "$ENV_FILE" "$SCRIPT_FILE" || status=$?',
    'rm -f "$ENV_FILE" "$SCRIPT_FILE"',
    'exit $status',
  ];
}

/** The environment file the instance sources: `export NAME='value'` lines. */
export function environmentFile(environment: Readonly<Record<string, string>>): string {
  return Object.entries(environment)
    .filter(([name]) => /^[A-Z_][A-Z0-9_]*$/.test(name))
    .map(([name, value]) => `export ${name}=${shellQuote(value)}`)
    .join('\n');
}

const STATES: readonly MachineState[] = ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'];

/** EC2 and SSM through the real AWS SDK, loaded on first use so bundles that never launch do not carry it. */
export function createAwsMachines(settings: AwsMachinesSettings): Machines {
  if (settings.AWS_REGION === '') throw new ConfigError('AWS_REGION is required for the code server EC2 backend.');
  const region = settings.AWS_REGION;
  let clients: Promise<{ ec2: EC2Client; ssm: SSMClient; EC2: typeof Ec2Sdk; SSM: typeof SsmSdk }> | null = null;
  const sdk = () =>
    (clients ??= (async () => {
      const [EC2, SSM] = await Promise.all([import('@aws-sdk/client-ec2'), import('@aws-sdk/client-ssm')]);
      // The SDK's own settings apply too (AWS_ENDPOINT_URL_EC2 and the credential chain); these are
      // the platform's parsed copies, so a platform started with an explicit environment gets them.
      const ec2 = new EC2.EC2Client({ region, ...(settings.AWS_ENDPOINT_URL_EC2 ? { endpoint: settings.AWS_ENDPOINT_URL_EC2 } : {}) });
      const ssm = new SSM.SSMClient({ region, ...(settings.AWS_ENDPOINT_URL_SSM ? { endpoint: settings.AWS_ENDPOINT_URL_SSM } : {}) });
      return { ec2, ssm, EC2, SSM };
    })());

  /** The instance's own address, where code-server answers with TLS (decision 0044). */
  const urlOf = (publicDns: string | undefined, publicIp: string | undefined): string | null => {
    const host = publicDns !== undefined && publicDns !== '' ? publicDns : publicIp;
    return host === undefined || host === '' ? null : `https://${host}:${CODE_SERVER_PORT}/`;
  };

  /** EC2's "no such instance" as the platform's not-found, so a vanished instance reads as gone. */
  const onMissing = async <T>(work: () => Promise<T>, instanceId: string): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      const name = (error as { name?: string; Code?: string }).name ?? '';
      if (name.startsWith('InvalidInstanceID')) throw new NotFoundError(`No instance ${instanceId}.`);
      throw error;
    }
  };

  return {
    backend: 'ec2',
    async launch(launch: MachineLaunch) {
      const { ec2, ssm, EC2, SSM } = await sdk();
      const ami = await ssm.send(new SSM.GetParameterCommand({ Name: settings.CODE_SERVER_AMI_PARAMETER }));
      const imageId = ami.Parameter?.Value;
      if (imageId === undefined) throw new ConfigError(`The AMI parameter ${settings.CODE_SERVER_AMI_PARAMETER} has no value.`);
      const tags = [
        { Key: 'Name', Value: `code-server-${launch.alias ?? launch.ownerId}` },
        { Key: 'platform:purpose', Value: 'code-server' },
        { Key: 'platform:owner', Value: launch.ownerId },
      ];
      const answer = await ec2.send(
        new EC2.RunInstancesCommand({
          ImageId: imageId,
          InstanceType: launch.instanceType as Ec2Sdk._InstanceType,
          MinCount: 1,
          MaxCount: 1,
          UserData: userData(launch.password),
          ...(settings.CODE_SERVER_SUBNET_ID ? { SubnetId: settings.CODE_SERVER_SUBNET_ID } : {}),
          ...(settings.CODE_SERVER_SECURITY_GROUP_ID ? { SecurityGroupIds: [settings.CODE_SERVER_SECURITY_GROUP_ID] } : {}),
          ...(settings.CODE_SERVER_INSTANCE_PROFILE ? { IamInstanceProfile: { Name: settings.CODE_SERVER_INSTANCE_PROFILE } } : {}),
          MetadataOptions: { HttpTokens: 'required' },
          BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 30, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: true } }],
          TagSpecifications: [
            { ResourceType: 'instance', Tags: tags },
            { ResourceType: 'volume', Tags: tags },
          ],
        }),
      );
      const instanceId = answer.Instances?.[0]?.InstanceId;
      if (instanceId === undefined) throw new Error('RunInstances answered no instance.');
      return { instanceId };
    },
    async describe(instanceId) {
      const { ec2, EC2 } = await sdk();
      try {
        const answer = await ec2.send(new EC2.DescribeInstancesCommand({ InstanceIds: [instanceId] }));
        const instance = answer.Reservations?.[0]?.Instances?.[0];
        if (instance === undefined) return null;
        const name = instance.State?.Name as MachineState | undefined;
        const state: MachineState = name !== undefined && STATES.includes(name) ? name : 'pending';
        return { instanceId, state, url: state === 'running' ? urlOf(instance.PublicDnsName, instance.PublicIpAddress) : null } satisfies Machine;
      } catch (error) {
        if (((error as { name?: string }).name ?? '').startsWith('InvalidInstanceID')) return null;
        throw error;
      }
    },
    async start(instanceId) {
      const { ec2, EC2 } = await sdk();
      await onMissing(() => ec2.send(new EC2.StartInstancesCommand({ InstanceIds: [instanceId] })), instanceId);
    },
    async stop(instanceId) {
      const { ec2, EC2 } = await sdk();
      await onMissing(() => ec2.send(new EC2.StopInstancesCommand({ InstanceIds: [instanceId] })), instanceId);
    },
    async terminate(instanceId) {
      const { ec2, EC2 } = await sdk();
      await onMissing(() => ec2.send(new EC2.TerminateInstancesCommand({ InstanceIds: [instanceId] })), instanceId);
    },
    async runSetup(instanceId, run: SetupRun) {
      const { ssm, SSM } = await sdk();
      const parameterName = `${SETUP_PARAMETER_PREFIX}${instanceId}/${randomUUID()}`;
      await ssm.send(new SSM.PutParameterCommand({ Name: parameterName, Type: 'SecureString', Value: environmentFile(run.environment), Overwrite: false }));
      try {
        const sent = await ssm.send(
          new SSM.SendCommandCommand({
            InstanceIds: [instanceId],
            DocumentName: 'AWS-RunShellScript',
            Comment: 'code-server setup script',
            Parameters: { commands: setupCommands(parameterName, region, run.script), executionTimeout: ['3600'] },
          }),
        );
        const commandId = sent.Command?.CommandId;
        if (commandId === undefined) throw new Error('SendCommand answered no command id.');
        return { commandId };
      } catch (error) {
        await ssm.send(new SSM.DeleteParameterCommand({ Name: parameterName })).catch(() => undefined);
        throw error;
      }
    },
    async setupState(instanceId, commandId) {
      const { ssm, SSM } = await sdk();
      const answer = await ssm.send(new SSM.GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }));
      const status = answer.Status ?? 'Pending';
      if (status === 'Pending' || status === 'InProgress' || status === 'Delayed' || status === 'Cancelling') return { state: 'running' };
      await removeSetupParameters(ssm, SSM, instanceId);
      if (status === 'Success') return { state: 'completed' };
      const detail = (answer.StandardErrorContent ?? '').trim().slice(-2000);
      return {
        state: 'failed',
        error: detail === '' ? `The setup script ended with status ${status} (exit code ${String(answer.ResponseCode ?? -1)}).` : detail,
      };
    },
  };
}

/** Deletes what a finished setup run left of its environment (normally the instance deleted it when it read it). */
async function removeSetupParameters(ssm: SSMClient, SSM: typeof SsmSdk, instanceId: string): Promise<void> {
  const listed = await ssm.send(new SSM.GetParametersByPathCommand({ Path: `${SETUP_PARAMETER_PREFIX}${instanceId}`, Recursive: true }));
  const names = (listed.Parameters ?? []).map((p) => p.Name).filter((n): n is string => n !== undefined);
  if (names.length > 0) await ssm.send(new SSM.DeleteParametersCommand({ Names: names }));
}
