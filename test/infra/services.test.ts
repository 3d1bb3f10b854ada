/**
 * Services in the cloud: an area's `service` entry point becomes a Fargate service behind an
 * Application Load Balancer and a CloudFront distribution, with the task granted what the area
 * declares and nothing else, reachable only through the load balancer, its image built from a
 * context the synth writes (no Docker). Without a service, none of it exists.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { CFN_LINT_MISSING, cfnLint, HAS_CFN_LINT } from '../support/cfn-lint.ts';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { SERVICE_BASE_IMAGE } from '../../lib/cloud/service-image.ts';
import { areas, resourcesOf, type AreaModule } from '../../lib/manifest/index.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import { sampleArea, serviceOnRoutedHostArea } from '../fixtures/sample-area/sample.module.ts';
import { cdkJsonContext, roleStatements, type TemplateJson, scratchEntriesDir } from './synth-platform.ts';

mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
const scratchEntries = scratchEntriesDir('service-entries-');
const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-services-'));
afterAll(() => {
  rmSync(scratchEntries, { recursive: true, force: true });
  rmSync(outdir, { recursive: true, force: true });
});

// CloudFront is left out: the websites area has a distribution of its own (the site host).
const SERVICE_TYPES = /^AWS::(ECS|EC2|ElasticLoadBalancingV2|ApplicationAutoScaling)::|^Custom::(AWS|VpcRestrictDefaultSG)$/;

function app(dir: string) {
  return new App({ outdir: dir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
}

let cached: { stack: PlatformStack; template: TemplateJson; id: (c: { node: { defaultChild?: unknown } }) => string } | undefined;

/** The platform with the sample area (a voice-host service among its entry points), synthesized once for the file. */
function synthWithService() {
  if (cached !== undefined) return cached;
  const root = app(outdir);
  const stack = new PlatformStack(root, 'service-test', {
    stage: 'test',
    version: '0',
    areas: [...areas.filter((area) => area.name !== 'voice'), sampleArea],
    entriesDir: scratchEntries,
  });
  root.synth();
  const template = JSON.parse(readFileSync(join(outdir, 'service-test.template.json'), 'utf8')) as TemplateJson;
  cached = { stack, template, id: (c) => stack.getLogicalId(c.node.defaultChild as never) };
  return cached;
}

function ofType(template: TemplateJson, type: string) {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/** The message a synth with `modules` added fails with. */
function synthFails(modules: readonly AreaModule[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-infra-services-'));
  try {
    new PlatformStack(app(dir), 'service-fail', {
      stage: 'test',
      version: '0',
      areas: [...areas.filter((area) => area.name !== 'voice'), ...modules],
      entriesDir: scratchEntries,
    });
    return 'synthesized';
  } catch (error) {
    return (error as Error).message;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Logical-id prefix of the code servers' machines (their own security group and role, outside the services' VPC). */
const CODE_SERVER_BLOCK = 'FunctionsCodeServerMachines';

describe('services', () => {
  it('exist only when a module declares one: without the voice area, no VPC, cluster, load balancer or distribution, and no VOICE_URL', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'platform-infra-services-'));
    const root = app(dir);
    const stack = new PlatformStack(root, 'no-service', {
      stage: 'test',
      version: '0',
      areas: areas.filter((area) => area.name !== 'voice'),
      entriesDir: scratchEntries,
    });
    root.synth();
    const template = JSON.parse(readFileSync(join(dir, 'no-service.template.json'), 'utf8')) as TemplateJson;
    rmSync(dir, { recursive: true, force: true });

    // Act
    // Code servers' own security group (lib/cloud/code-server-machines.ts, in the default VPC) is not the services'.
    const serviceResources = Object.entries(template.Resources)
      .filter(([id]) => !id.startsWith(CODE_SERVER_BLOCK))
      .map(([, r]) => r.Type)
      .filter((type) => SERVICE_TYPES.test(type));
    const withVoiceUrl = ofType(template, 'AWS::Lambda::Function').filter(([, r]) => r.Properties?.['Environment']?.['Variables']?.['VOICE_URL'] !== undefined);

    // Assess
    expect(stack.services).toBeUndefined();
    expect(serviceResources).toEqual([]);
    expect(withVoiceUrl).toEqual([]);
    expect(JSON.stringify(template.Outputs?.['VoiceUrl']?.Value)).toMatch(/\/voice"\]\]\}$/);
  });

  it('run on Fargate (arm64) behind a load balancer and a CloudFront distribution that caches nothing and forwards every header', () => {
    // Prepare
    const { stack, template, id } = synthWithService();
    const host = stack.services!.hosts.get('voice')!;

    // Act
    const task = template.Resources[id(host.taskDefinition)]!.Properties!;
    const container = task['ContainerDefinitions'][0];
    const service = template.Resources[id(host.service)]!.Properties!;
    const targetGroup = template.Resources[id(host.targetGroup)]!.Properties!;
    const loadBalancer = template.Resources[id(host.loadBalancer)]!.Properties!;
    const distribution = template.Resources[id(host.distribution)]!.Properties!['DistributionConfig'];

    // Assess
    for (const type of [
      'AWS::ECS::Cluster',
      'AWS::ECS::TaskDefinition',
      'AWS::ECS::Service',
      'AWS::ElasticLoadBalancingV2::LoadBalancer',
      'AWS::ElasticLoadBalancingV2::Listener',
      'AWS::ElasticLoadBalancingV2::TargetGroup',
      'AWS::EC2::VPC',
    ])
      expect(ofType(template, type), type).toHaveLength(1);
    // The service's distribution, the site host's (the websites area) and the widget's (the embed area).
    expect(ofType(template, 'AWS::CloudFront::Distribution')).toHaveLength(3);
    expect(ofType(template, 'AWS::EC2::NatGateway')).toEqual([]);
    // Public subnets for the tasks, isolated ones for the internal load balancer (the VPC origin's).
    expect(ofType(template, 'AWS::EC2::Subnet').map(([, s]) => s.Properties?.['MapPublicIpOnLaunch'])).toEqual([true, true, false, false]);
    expect(task).toMatchObject({ Cpu: '256', Memory: '512', RuntimePlatform: { CpuArchitecture: 'ARM64' }, RequiresCompatibilities: ['FARGATE'] });
    expect(container).toMatchObject({ PortMappings: [{ ContainerPort: 8080 }], StopTimeout: 120, ReadonlyRootFilesystem: true });
    expect(service).toMatchObject({
      DesiredCount: 1,
      LaunchType: 'FARGATE',
      DeploymentConfiguration: { DeploymentCircuitBreaker: { Enable: true, Rollback: true }, MinimumHealthyPercent: 100 },
      NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'ENABLED' } },
      LoadBalancers: [{ ContainerPort: 8080, TargetGroupArn: { Ref: id(host.targetGroup) } }],
    });
    expect(targetGroup).toMatchObject({ Port: 8080, HealthCheckPath: '/_health', TargetType: 'ip' });
    expect(targetGroup['TargetGroupAttributes']).toContainEqual({ Key: 'deregistration_delay.timeout_seconds', Value: '300' });
    expect(loadBalancer).toMatchObject({ Scheme: 'internal', Type: 'application' });
    expect(loadBalancer['LoadBalancerAttributes']).toContainEqual({ Key: 'idle_timeout.timeout_seconds', Value: '600' });
    expect(distribution).toMatchObject({
      DefaultCacheBehavior: {
        // The managed CachingDisabled and AllViewer policies.
        CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
        OriginRequestPolicyId: '216adef6-5c7f-47e4-b989-5492eafa07d3',
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: expect.arrayContaining(['GET', 'POST', 'OPTIONS']),
      },
      // A VPC origin: CloudFront reaches the internal load balancer on AWS's network, adding the origin secret.
      Origins: [
        {
          DomainName: { 'Fn::GetAtt': [id(host.loadBalancer), 'DNSName'] },
          VpcOriginConfig: expect.objectContaining({ VpcOriginId: expect.anything() }),
          OriginCustomHeaders: [{ HeaderName: 'X-Origin-Verify', HeaderValue: expect.anything() }],
        },
      ],
    });
    expect(JSON.stringify(distribution['Origins'])).toContain('{{resolve:secretsmanager:');
  });

  it('scale on active connections per healthy task when the service declares scaling (metric math in the target tracking policy)', () => {
    // Prepare
    const { template } = synthWithService();

    // Act
    const [target] = ofType(template, 'AWS::ApplicationAutoScaling::ScalableTarget').map(([, r]) => r.Properties!);
    const [policy] = ofType(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').map(([, r]) => r.Properties!);
    const tracking = policy!['TargetTrackingScalingPolicyConfiguration'];
    const metrics = JSON.stringify(tracking['CustomizedMetricSpecification']['Metrics']);

    // Assess: the sample declares 1 to 4 tasks, 100 calls each (each call counts on both legs)
    expect(target).toMatchObject({ MinCapacity: 1, MaxCapacity: 4, ScalableDimension: 'ecs:service:DesiredCount' });
    expect(tracking.TargetValue).toBe(200);
    expect(metrics).toContain('ActiveConnectionCount');
    expect(metrics).toContain('HealthyHostCount');
  });

  it("grant the task role exactly the area's declared resources", () => {
    // Prepare
    const { stack, template, id } = synthWithService();
    const role = stack.services!.hosts.get('voice')!.taskDefinition.taskRole;
    const tableIds = new Map([...stack.data.tables].map(([name, table]) => [id(table), name]));

    // Act
    const statements = roleStatements(template, id(role));
    const actions = statements.flatMap((s) => [s.Action].flat());
    const tables = [
      ...new Set(
        statements.flatMap((s) => [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => tableIds.get(m[1]!)).filter((n) => n !== undefined)),
      ),
    ].sort();

    // Assess
    expect(tables).toEqual([...resourcesOf([sampleArea], []).tables].sort());
    expect(tables).toEqual(['agent-counts', 'agent-names', 'agents']);
    // The sample also declares `blobs` and `tasks`: the bucket, and sending to its own queues; nothing else.
    expect([...new Set(actions.filter((a) => !a.startsWith('dynamodb:') && !a.startsWith('s3:')))]).toEqual(['sqs:SendMessage']);
    expect(JSON.stringify(statements.filter((s) => s.Action === 'sqs:SendMessage').map((s) => s.Resource))).toContain(
      id(stack.taskQueues.queues.get('sample.file-note')!.queue),
    );
  });

  it('let only the load balancer reach the tasks, and only CloudFront reach the load balancer', () => {
    // Prepare
    const { stack, template, id } = synthWithService();
    const host = stack.services!.hosts.get('voice')!;
    const taskGroup = { 'Fn::GetAtt': [id(host.taskSecurityGroup), 'GroupId'] };
    const balancerGroup = { 'Fn::GetAtt': [id(host.loadBalancerSecurityGroup), 'GroupId'] };

    // Act
    const ingress = ofType(template, 'AWS::EC2::SecurityGroupIngress').map(([, r]) => r.Properties!);
    const inline = ofType(template, 'AWS::EC2::SecurityGroup')
      .filter(([groupId]) => !groupId.startsWith(CODE_SERVER_BLOCK))
      .flatMap(([, r]) => r.Properties?.['SecurityGroupIngress'] ?? []);
    const intoTasks = ingress.filter((r) => JSON.stringify(r['GroupId']) === JSON.stringify(taskGroup));
    const intoBalancer = ingress.filter((r) => JSON.stringify(r['GroupId']) === JSON.stringify(balancerGroup));

    // Assess
    expect(inline).toEqual([]);
    expect(intoTasks).toEqual([expect.objectContaining({ IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080, SourceSecurityGroupId: balancerGroup })]);
    expect(intoBalancer).toEqual([expect.objectContaining({ IpProtocol: 'tcp', FromPort: 80, ToPort: 80, SourcePrefixListId: expect.anything() })]);
    expect(JSON.stringify(intoBalancer[0]!['SourcePrefixListId'])).toContain('PrefixLists.0.PrefixListId');
    expect(ingress.filter((r) => r['CidrIp'] !== undefined || r['CidrIpv6'] !== undefined)).toEqual([]);
  });

  it('give the other functions, the tasks and the outputs the host URL (wss:// on the distribution)', () => {
    // Prepare
    const { stack, template, id } = synthWithService();
    const host = stack.services!.hosts.get('voice')!;
    const expected = { 'Fn::Join': ['', ['wss://', { 'Fn::GetAtt': [id(host.distribution), 'DomainName'] }]] };
    const platformFunctions = [...stack.functions.areas.values(), ...stack.functions.schedules.values(), stack.functions.fallback].map((f) => id(f.function));

    // Act
    const functionUrls = platformFunctions.map((fn) => template.Resources[fn]!.Properties!['Environment']['Variables']['VOICE_URL']);
    const taskEnvironment = template.Resources[id(host.taskDefinition)]!.Properties!['ContainerDefinitions'][0]['Environment'] as {
      Name: string;
      Value: unknown;
    }[];

    // Assess
    expect(functionUrls).toEqual(platformFunctions.map(() => expected));
    expect(taskEnvironment).toContainEqual({ Name: 'VOICE_URL', Value: expected });
    expect(taskEnvironment.map((v) => v.Name)).toEqual(expect.arrayContaining(['TABLE_PREFIX', 'BUCKET_PREFIX', 'AWS_REGION', 'PORT']));
    expect(template.Outputs?.['VoiceUrl']?.Value).toEqual(expected);
  });

  it('stage the image at synth without Docker: a bundle of the generated entry and a Dockerfile, built at deploy for arm64', () => {
    // Prepare
    const { stack } = synthWithService();
    const host = stack.services!.hosts.get('voice')!;

    // Act
    const assets = JSON.parse(readFileSync(join(outdir, 'service-test.assets.json'), 'utf8')) as {
      dockerImages: Record<string, { source: { directory: string; platform?: string } }>;
    };
    const images = Object.values(assets.dockerImages);
    const staged = join(outdir, images[0]!.source.directory);
    const dockerfile = readFileSync(join(staged, 'Dockerfile'), 'utf8');
    const entry = readFileSync(join(scratchEntries, 'service-sample.voice-echo.entry.ts'), 'utf8');

    // Assess
    expect(images).toHaveLength(1);
    expect(images[0]!.source.platform).toBe('linux/arm64');
    expect(readdirSync(staged).sort()).toEqual(['Dockerfile', 'main.mjs', 'main.mjs.map', 'node_modules']);
    expect(readdirSync(host.imageDirectory).sort()).toEqual(['Dockerfile', 'main.mjs', 'main.mjs.map', 'node_modules']);
    // The session-token verifier, imported on first use from beside the bundle (core/auth/cognito.ts), loads from the image's directory.
    const verifier = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('aws-jwt-verify');"], { cwd: staged, encoding: 'utf8' });
    expect({ status: verifier.status, stderr: verifier.stderr }).toEqual({ status: 0, stderr: '' });
    expect(dockerfile).toMatch(/^COPY node_modules \.\/node_modules$/m);
    expect(dockerfile).toContain(`FROM ${SERVICE_BASE_IMAGE}`);
    expect(SERVICE_BASE_IMAGE).toMatch(/^public\.ecr\.aws\/.*node:20/);
    expect(dockerfile).toMatch(/^COPY main\.mjs main\.mjs\.map \.\/$/m);
    // COPY is the only build step: nothing runs inside the image at build time.
    expect(dockerfile).not.toMatch(/^RUN /m);
    // The area's module first, then those providing the ports it uses (modulesOfFunction).
    expect(entry).toMatch(/serviceMain\("sample", \[sampleArea(, \w+Area)*\], \{[^}]*\}, "sample\.voice-echo", definition\)/);
    expect(entry).toContain('import { sampleArea } from "../../test/fixtures/sample-area/sample.module.ts";');
    expect(entry).toContain('test/fixtures/sample-area/handlers/voice-echo.server.ts');
    expect(readFileSync(join(staged, 'main.mjs'), 'utf8')).toContain('/_health');
  });

  it('refuse at synth a service on a host that has routes, and a size Fargate does not offer', () => {
    // Act
    const routed = synthFails([serviceOnRoutedHostArea]);
    const oversized = synthFails([
      defineArea({
        name: 'sample',
        folder: 'test/fixtures/sample-area',
        entryPoints: [{ kind: 'service', handler: 'voice-echo', host: 'voice', cpu: 256, memoryMb: 4096 }],
      }),
    ]);

    // Assess
    expect(routed).toMatch(/^Service sample\.voice-echo serves the stream host, which also has routes/);
    expect(oversized).toMatch(/^Service sample\.voice-echo: 256 CPU units with 4096 MB is not a Fargate size/);
  });
});

describe('cfn-lint', () => {
  it.skipIf(!HAS_CFN_LINT)(
    HAS_CFN_LINT ? 'finds no errors in the template with a service' : `finds no errors (${CFN_LINT_MISSING})`,
    () => {
      // Prepare
      synthWithService();

      // Act
      const run = cfnLint(['service-test.template.json'], outdir);
      const findings = run.findings;

      // Assess: exit status bits are 2 errors, 4 warnings, 8 informational; anything else is a crash.
      expect(run.error).toBeUndefined();
      expect(findings.filter((f) => f.Level === 'Error').map((f) => `${f.Rule.Id} ${f.Message}`)).toEqual([]);
      expect(run.status! & ~(4 | 8)).toBe(0);
    },
    // A guard against a hang, not a check of speed: cfn-lint took over 60 s on a loaded machine.
    600_000,
  );
});
