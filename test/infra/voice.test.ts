/**
 * The voice area in the cloud: the bridge is the manifest's service, on Fargate behind the load
 * balancer and CloudFront (services.test.ts checks the construct itself with the sample area); its
 * task reads credentials, agents, keys and credits, and starts sessions through the runtime
 * function, which connects back to it for the audio.
 */
import { describe, expect, it } from 'vitest';
import { voiceArea } from '../../functions/voice/voice.module.ts';
import { SERVICE_CONTAINER_PORT } from '../../lib/cloud/service-image.ts';
import { resourcesOf } from '../../lib/manifest/index.ts';
import { json, logicalIdOf, roleStatements, synthPlatform } from './synth-platform.ts';

describe('the voice bridge in the cloud', () => {
  it('runs the voice area as a Fargate service on the voice host, with wss:// as VoiceUrl and load balancer timeouts for long calls', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const host = platform.stack.services!.hosts.get('voice')!;

    // Act
    const task = template.Resources[logicalIdOf(platform, host.taskDefinition)]!.Properties!;
    const environment = (task['ContainerDefinitions'][0]['Environment'] as { Name: string; Value: unknown }[]).map((v) => v.Name);
    const loadBalancer = template.Resources[logicalIdOf(platform, host.loadBalancer)]!.Properties!;
    const targetGroup = template.Resources[logicalIdOf(platform, host.targetGroup)]!.Properties!;

    // Assess
    expect(host.spec.id).toBe('voice.voice-bridge');
    expect(task).toMatchObject({ Cpu: '1024', Memory: '2048', RuntimePlatform: { CpuArchitecture: 'ARM64' } });
    expect(environment).toEqual(expect.arrayContaining(['VOICE_URL', 'RUNTIME_FUNCTION_NAME', 'TABLE_PREFIX']));
    expect(loadBalancer['LoadBalancerAttributes']).toContainEqual({ Key: 'idle_timeout.timeout_seconds', Value: '600' });
    expect(targetGroup['TargetGroupAttributes']).toContainEqual({ Key: 'deregistration_delay.timeout_seconds', Value: '300' });
    expect(JSON.stringify(template.Outputs?.['VoiceUrl']?.Value)).toContain('wss://');
  });

  it("grants the task role the voice area's declared resources: credentials, agents, keys, credits, usage logs, and invoking the runtime", () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const role = platform.stack.services!.hosts.get('voice')!.taskDefinition.taskRole;
    const tableIds = new Map([...platform.stack.data.tables].map(([name, table]) => [logicalIdOf(platform, table), name]));

    // Act
    const statements = roleStatements(template, logicalIdOf(platform, role));
    const tables = [
      ...new Set(
        statements.flatMap((s) => [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => tableIds.get(m[1]!)).filter((n) => n !== undefined)),
      ),
    ].sort();
    const actions = new Set(statements.flatMap((s) => [s.Action].flat()));

    // Assess
    expect(tables).toEqual([...resourcesOf([voiceArea], []).tables].sort());
    expect(tables).toEqual(expect.arrayContaining(['agents', 'keys', 'tokens', 'users']));
    expect(actions.has('lambda:InvokeFunction')).toBe(true);
    expect([...actions].some((a) => a.startsWith('sqs:'))).toBe(false);
  });

  it('scales on connections, and lets its tasks reach each other on the container port only, to pass on connect-backs', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const host = platform.stack.services!.hosts.get('voice')!;
    const groupId = logicalIdOf(platform, host.taskSecurityGroup);

    // Act
    const scaling = Object.values(template.Resources).filter((r) => r.Type === 'AWS::ApplicationAutoScaling::ScalableTarget');
    const fromItself = Object.values(template.Resources).filter(
      (r) =>
        r.Type === 'AWS::EC2::SecurityGroupIngress' &&
        JSON.stringify(r.Properties!['GroupId']).includes(groupId) &&
        JSON.stringify(r.Properties!['SourceSecurityGroupId']).includes(groupId),
    );

    // Assess
    expect(scaling.map((r) => r.Properties!['MaxCapacity'])).toEqual([10]);
    expect(fromItself.map((r) => [r.Properties!['FromPort'], r.Properties!['ToPort']])).toEqual([[SERVICE_CONTAINER_PORT, SERVICE_CONTAINER_PORT]]);
    // Each task tells the others the port it listens on: the container's.
    expect(voiceArea.settings.VOICE_PEER_PORT.parse(undefined)).toBe(SERVICE_CONTAINER_PORT);
  });
});
