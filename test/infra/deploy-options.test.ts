/**
 * The deploy options (lib/cloud/deploy-options.ts) on and off: the prod preset is the shared synth
 * (synth-platform.ts, stage `test`); one more synth, the dev preset with the other options flipped
 * (voice on, a custom domain, open sign-up, rotation, an area cap), checks the other side of each.
 */
import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveDeployOptions } from '../../lib/cloud/deploy-options.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { unacknowledgedFindings } from './nag.ts';
import { cdkJsonContext, json, logicalIdOf, scratchEntriesDir, synthPlatform, withScratchOutdir, type TemplateJson } from './synth-platform.ts';

const CERT_EAST = 'arn:aws:acm:us-east-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';
const CERT_REGIONAL = 'arn:aws:acm:eu-west-1:123456789012:certificate/66666666-7777-8888-9999-000000000000';

function ofType(template: TemplateJson, type: string) {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

describe('deploy options: parsing', () => {
  it('takes the preset from the stage and lets the context override each option, strings as -c gives them', () => {
    // Act
    const dev = resolveDeployOptions('dev');
    const prod = resolveDeployOptions('prod');
    const mixed = resolveDeployOptions('dev', { voice: 'true', apiRateLimit: '7.5', areaConcurrency: '{"agents":50}', removalPolicy: 'retain' });

    // Assess
    expect(dev).toMatchObject({
      preset: 'dev',
      voice: false,
      waf: false,
      accessLogs: false,
      removalPolicy: 'destroy',
      selfSignUp: false,
      runtimeConcurrency: 0,
    });
    expect(prod).toMatchObject({
      preset: 'prod',
      voice: true,
      waf: true,
      accessLogs: true,
      removalPolicy: 'retain',
      selfSignUp: false,
      runtimeConcurrency: 200,
      runTokenRotationDays: 30,
    });
    expect(mixed).toMatchObject({ preset: 'dev', voice: true, apiRateLimit: 7.5, areaConcurrency: { agents: 50 }, removalPolicy: 'retain' });
    expect(resolveDeployOptions('staging', { preset: 'dev' }).preset).toBe('dev');
  });

  it('refuses bad values, unknown combinations and reservations the account cannot hold, naming the option', () => {
    // Act / Assess
    expect(() => resolveDeployOptions('prod', { waf: 'yes' })).toThrow(/waf/);
    expect(() => resolveDeployOptions('prod', { accessLogRetentionDays: 10 })).toThrow(/accessLogRetentionDays: must be one of/);
    expect(() => resolveDeployOptions('prod', { removalPolicy: 'snapshot' })).toThrow(/removalPolicy/);
    expect(() => resolveDeployOptions('prod', { preset: 'staging' })).toThrow(/preset/);
    expect(() => resolveDeployOptions('prod', { runtimeConcurrency: 900 })).toThrow(/unreserved/);
    expect(() => resolveDeployOptions('prod', { domainName: 'example.com' })).toThrow(/certificateArn/);
    expect(() => resolveDeployOptions('prod', { domainName: 'example.com', certificateArn: CERT_REGIONAL, regionalCertificateArn: CERT_REGIONAL })).toThrow(
      /us-east-1/,
    );
    expect(() => resolveDeployOptions('prod', { certificateArn: CERT_EAST })).toThrow(/need domainName/);
  });
});

describe('deploy options: the prod preset (the shared synth)', () => {
  it('closes sign-up, allows the password flow and keeps every stateful resource', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    const [, pool] = ofType(template, 'AWS::Cognito::UserPool')[0]!;
    const stateful = [...ofType(template, 'AWS::DynamoDB::Table'), ...ofType(template, 'AWS::KMS::Key'), ...ofType(template, 'AWS::Cognito::UserPool')];

    // Assess
    expect(pool.Properties!['AdminCreateUserConfig']).toMatchObject({ AllowAdminCreateUserOnly: true });
    expect(pool.Properties!['DeletionProtection']).toBe('ACTIVE');
    expect(stateful.map(([, r]) => r.DeletionPolicy)).toEqual(stateful.map(() => 'Retain'));
  });

  it('puts a WAF web ACL with managed rules and a rate limit on the API stage, and throttles the stage', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    const [, acl] = ofType(template, 'AWS::WAFv2::WebACL')[0]!;
    const associations = ofType(template, 'AWS::WAFv2::WebACLAssociation');
    const [, stage] = ofType(template, 'AWS::ApiGateway::Stage')[0]!;

    // Assess
    expect(acl.Properties!['Scope']).toBe('REGIONAL');
    const rules = acl.Properties!['Rules'] as { Name: string; Statement: Record<string, any> }[];
    expect(rules.map((r) => r.Name)).toEqual([
      'RatePerAddress',
      'AWSManagedRulesAmazonIpReputationList',
      'AWSManagedRulesKnownBadInputsRuleSet',
      'AWSManagedRulesCommonRuleSet',
    ]);
    expect(rules[0]!.Statement['RateBasedStatement']).toEqual({ Limit: 2000, AggregateKeyType: 'IP' });
    expect(associations).toHaveLength(1);
    expect(stage.Properties!['MethodSettings']).toContainEqual(
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 }),
    );
    expect(stage.Properties!['AccessLogSetting']).toMatchObject({ DestinationArn: expect.anything(), Format: expect.stringContaining('requestId') });
  });

  it('reserves concurrency for the user-code runtimes only, leaving the platform functions the unreserved pool', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);

    // Act
    const reserved = Object.fromEntries(
      ofType(template, 'AWS::Lambda::Function')
        .filter(([, f]) => f.Properties!['ReservedConcurrentExecutions'] !== undefined)
        .map(([id, f]) => [id, f.Properties!['ReservedConcurrentExecutions']]),
    );

    // Assess
    expect(reserved).toEqual({
      [logicalIdOf(platform, platform.stack.runtime.function)]: 200,
      [logicalIdOf(platform, platform.stack.mcpRuntime.function)]: 100,
    });
  });

  it('logs every bucket, distribution and the load balancer into the log bucket, and the VPC flow logs', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const logBucket = logicalIdOf(platform, platform.stack.accessLogs!.bucket);

    // Act
    const buckets = ofType(template, 'AWS::S3::Bucket').filter(([id]) => id !== logBucket);
    const distributions = ofType(template, 'AWS::CloudFront::Distribution');
    const [, balancer] = ofType(template, 'AWS::ElasticLoadBalancingV2::LoadBalancer')[0]!;

    // Assess
    expect(buckets.length).toBeGreaterThanOrEqual(4);
    for (const [id, b] of buckets)
      expect(b.Properties!['LoggingConfiguration'], id).toEqual({ DestinationBucketName: { Ref: logBucket }, LogFilePrefix: `s3/${id}/` });
    for (const [id, d] of distributions) expect(d.Properties!['DistributionConfig']['Logging'], id).toMatchObject({ Prefix: `cloudfront/${id}/` });
    expect(balancer.Properties!['LoadBalancerAttributes']).toContainEqual({ Key: 'access_logs.s3.enabled', Value: 'true' });
    expect(ofType(template, 'AWS::EC2::FlowLog')).toHaveLength(ofType(template, 'AWS::EC2::VPC').length);
    expect(template.Resources[logBucket]!.Properties!['LifecycleConfiguration'].Rules[0]).toMatchObject({ ExpirationInDays: 90 });
  });

  it("admits at the load balancer only requests carrying its distribution's origin secret, from CloudFront's VPC origin", () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const host = platform.stack.services!.hosts.get('voice')!;

    // Act
    const [, listener] = ofType(template, 'AWS::ElasticLoadBalancingV2::Listener')[0]!;
    const [, rule] = ofType(template, 'AWS::ElasticLoadBalancingV2::ListenerRule')[0]!;
    const [, origin] = ofType(template, 'AWS::CloudFront::VpcOrigin')[0]!;
    const secret = logicalIdOf(platform, host.originSecret);

    // Assess
    expect(listener.Properties!['DefaultActions']).toEqual([
      { Type: 'fixed-response', FixedResponseConfig: { StatusCode: '403', ContentType: 'text/plain', MessageBody: 'Forbidden' } },
    ]);
    expect(rule.Properties!['Conditions']).toEqual([
      { Field: 'http-header', HttpHeaderConfig: { HttpHeaderName: 'X-Origin-Verify', Values: [expect.anything()] } },
    ]);
    expect(JSON.stringify(rule.Properties!['Conditions'])).toContain(secret);
    expect(origin.Properties!['VpcOriginEndpointConfig']).toMatchObject({ Arn: { Ref: logicalIdOf(platform, host.loadBalancer) } });
  });

  it("sends storage events that fail after Lambda's retries to a failure queue", () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);

    // Act
    const configs = ofType(template, 'AWS::Lambda::EventInvokeConfig').map(([, c]) => c.Properties!);

    // Assess
    expect(platform.stack.functions.storageEventFailures.size).toBeGreaterThan(0);
    expect(configs).toHaveLength(platform.stack.functions.storageEvents.size);
    for (const c of configs) expect(c).toMatchObject({ MaximumRetryAttempts: 2, DestinationConfig: { OnFailure: { Destination: expect.anything() } } });
  });
});

describe('deploy options: dev preset with the rest flipped', () => {
  const entries = scratchEntriesDir('deploy-options-entries-');
  afterAll(() => rmSync(entries, { recursive: true, force: true }));
  let built: { stack: PlatformStack; template: TemplateJson; nested: TemplateJson[] } | undefined;
  const variant = () =>
    (built ??= withScratchOutdir((outdir) => {
      const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const deploy = resolveDeployOptions('dev', {
        voice: true,
        selfSignUp: true,
        domainName: 'agents.example.com',
        certificateArn: CERT_EAST,
        regionalCertificateArn: CERT_REGIONAL,
        runTokenRotationDays: 7,
        areaConcurrency: { agents: 50 },
      });
      const stack = new PlatformStack(app, 'deploy-options-dev', { stage: 'dev', version: '0', entriesDir: entries, deploy });
      return {
        stack,
        template: Template.fromStack(stack).toJSON() as TemplateJson,
        nested: [...stack.api.segmentStacks.values()].map((n) => Template.fromStack(n).toJSON() as TemplateJson),
      };
    }));

  it('destroys everything it made: no Retain anywhere, buckets emptied first, the key on the shortest wait', () => {
    // Act
    const { template, nested } = variant();
    const retained = [template, ...nested].flatMap((t) =>
      Object.entries(t.Resources).filter(([, r]) => r.DeletionPolicy === 'Retain' || r.UpdateReplacePolicy === 'Retain'),
    );

    // Assess
    expect(retained.map(([id, r]) => `${id} ${r.Type}`)).toEqual([]);
    expect(ofType(template, 'Custom::S3AutoDeleteObjects').length).toBe(ofType(template, 'AWS::S3::Bucket').length);
    expect(ofType(template, 'AWS::KMS::Key')[0]![1].Properties!['PendingWindowInDays']).toBe(7);
    expect(ofType(template, 'AWS::Cognito::UserPool')[0]![1].Properties!['DeletionProtection']).toBe('INACTIVE');
  });

  it("turns WAF, access logs and the runtimes' reservations off, opens sign-up, caps the named area and rotates the run-token secret", () => {
    // Act
    const { stack, template } = variant();
    const reserved = ofType(template, 'AWS::Lambda::Function').filter(([, f]) => f.Properties!['ReservedConcurrentExecutions'] !== undefined);
    const agents = stack.getLogicalId(stack.functions.areas.get('agents')!.function.node.defaultChild as never);

    // Assess
    expect(ofType(template, 'AWS::WAFv2::WebACL')).toEqual([]);
    expect(ofType(template, 'AWS::S3::Bucket').filter(([, b]) => b.Properties!['LoggingConfiguration'] !== undefined)).toEqual([]);
    expect(ofType(template, 'AWS::ApiGateway::Stage')[0]![1].Properties!['AccessLogSetting']).toBeUndefined();
    expect(ofType(template, 'AWS::ApiGateway::Account')).toEqual([]);
    expect(reserved.map(([id, f]) => [id, f.Properties!['ReservedConcurrentExecutions']])).toEqual([[agents, 50]]);
    expect(ofType(template, 'AWS::Cognito::UserPool')[0]![1].Properties!['AdminCreateUserConfig']).toMatchObject({ AllowAdminCreateUserOnly: false });
    expect(ofType(template, 'AWS::SecretsManager::RotationSchedule')[0]![1].Properties!['RotationRules']).toMatchObject({ ScheduleExpression: 'rate(7 days)' });
  });

  it('serves api., voice. and cdn. of the domain, the load balancer over HTTPS under its own certificate name', () => {
    // Act
    const { stack, template } = variant();
    const [, listener] = ofType(template, 'AWS::ElasticLoadBalancingV2::Listener')[0]!;
    const [, origin] = ofType(template, 'AWS::CloudFront::VpcOrigin')[0]!;
    const aliases = ofType(template, 'AWS::CloudFront::Distribution').flatMap(([, d]) => d.Properties!['DistributionConfig']['Aliases'] ?? []);
    const voice = stack.services!.hosts.get('voice')!;
    const distribution = template.Resources[stack.getLogicalId(voice.distribution.node.defaultChild as never)]!.Properties!['DistributionConfig'];

    // Assess
    expect(listener.Properties).toMatchObject({ Port: 443, Protocol: 'HTTPS', Certificates: [{ CertificateArn: CERT_REGIONAL }] });
    expect(origin.Properties!['VpcOriginEndpointConfig']).toMatchObject({ OriginProtocolPolicy: 'https-only' });
    expect(distribution['Origins'][0]).toMatchObject({ DomainName: 'voice-origin.agents.example.com' });
    expect(aliases.sort()).toEqual(['cdn.agents.example.com', 'voice.agents.example.com']);
    expect(ofType(template, 'AWS::ApiGateway::DomainName')[0]![1].Properties).toMatchObject({
      DomainName: 'api.agents.example.com',
      RegionalCertificateArn: CERT_REGIONAL,
    });
    expect(template.Outputs!['BaseUrl']!.Value).toBe('https://api.agents.example.com');
    expect(JSON.stringify(template.Outputs!['VoiceUrl']!.Value)).toBe('"wss://voice.agents.example.com"');
  });

  it('passes cdk-nag too, every finding of what it turns off acknowledged with the option that turns it on', () => {
    // Act
    const { stack } = variant();

    // Assess
    expect(unacknowledgedFindings(stack)).toEqual([]);
  });

  it('leaves voice out when the option is off: no VPC, cluster, load balancer, distribution or Fargate service', () => {
    // Prepare: no routes, so only the stores, runtimes and entry points are built (the voice area has no routes).
    const build = (voice: boolean) =>
      withScratchOutdir((outdir) => {
        const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
        const stack = new PlatformStack(app, `voice-${String(voice)}`, {
          stage: 'dev',
          version: '0',
          routes: [],
          entriesDir: entries,
          deploy: resolveDeployOptions('dev', { voice }),
        });
        // The voice block's resources (other areas may bring a VPC of their own, e.g. code servers).
        const types = new Set(
          Object.entries((Template.fromStack(stack).toJSON() as TemplateJson).Resources)
            .filter(([id]) => id.startsWith('Services'))
            .map(([, r]) => r.Type),
        );
        return { stack, types };
      });

    // Act
    const off = build(false);
    const on = build(true);

    // Assess
    for (const type of ['AWS::EC2::VPC', 'AWS::ECS::Cluster', 'AWS::ECS::Service', 'AWS::ElasticLoadBalancingV2::LoadBalancer', 'AWS::CloudFront::VpcOrigin']) {
      expect(off.types.has(type), type).toBe(false);
      expect(on.types.has(type), type).toBe(true);
    }
    expect(off.stack.services).toBeUndefined();
    expect(off.stack.data.tables.has('voice-rendezvous')).toBe(false);
  });
});
