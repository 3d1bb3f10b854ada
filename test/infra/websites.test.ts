/**
 * The site host in the cloud (issue 15): a CloudFront distribution whose origin is the site
 * function's URL behind origin access control, a viewer-request function for folder indexes, the
 * websites bucket private, and the invalidation grant on the websites area's function alone.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, FunctionUrlAuthType, Runtime } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { SiteDistribution } from '../../lib/cloud/site-distribution.ts';
import { json, logicalIdOf, platformFunctions, roleStatements, synthPlatform } from './synth-platform.ts';

/** The site distribution alone, in front of a stand-in function URL. */
function siteDistribution(domain?: { name: string; certificateArn: string }) {
  const stack = new Stack(new App(), 'Sites', { env: { region: 'us-east-1' } });
  const fn = new LambdaFunction(stack, 'Site', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler = () => {}') });
  const site = new SiteDistribution(stack, 'Host', {
    functionUrl: fn.addFunctionUrl({ authType: FunctionUrlAuthType.AWS_IAM }),
    ...(domain ? { domain } : {}),
  });
  return { site, template: Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> } };
}

describe('site host', () => {
  it('is a distribution in front of the site function URL, which only CloudFront may call (AWS_IAM, origin access control)', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const site = platform.stack.functions.streams.get('site')!;
    const siteFunctionId = logicalIdOf(platform, site.function.function);

    // Act
    const distributions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudFront::Distribution');
    const siteDistribution = distributions.find((d) => String(d.Properties?.['DistributionConfig'].Comment).includes('site host'))!;
    const config = siteDistribution.Properties!['DistributionConfig'];
    const urlIds = Object.keys(template.Resources).filter(
      (id) =>
        template.Resources[id]!.Type === 'AWS::Lambda::Url' &&
        JSON.stringify(template.Resources[id]!.Properties?.['TargetFunctionArn']).includes(siteFunctionId),
    );
    const urls = urlIds.map((id) => template.Resources[id]!);
    const oacs = Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudFront::OriginAccessControl');
    const invokePermissions = Object.values(template.Resources).filter(
      (r) =>
        r.Type === 'AWS::Lambda::Permission' &&
        r.Properties?.['Principal'] === 'cloudfront.amazonaws.com' &&
        urlIds.some((id) => JSON.stringify(r.Properties?.['FunctionName']).includes(id)) &&
        JSON.stringify(r.Properties?.['SourceArn']).includes(':distribution/'),
    );

    // Assess
    expect(urls).toHaveLength(1);
    expect(urls[0]!.Properties).toMatchObject({ AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    expect(config.Origins).toHaveLength(1);
    expect(config.Origins[0].OriginAccessControlId).toBeDefined();
    expect(oacs.some((o) => o.Properties?.['OriginAccessControlConfig'].OriginAccessControlOriginType === 'lambda')).toBe(true);
    expect(invokePermissions.map((p) => p.Properties?.['Action'])).toContain('lambda:InvokeFunctionUrl');
    expect(config.DefaultCacheBehavior.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(config.DefaultCacheBehavior.CachePolicyId).toBeDefined();
    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([{ EventType: 'viewer-request', FunctionARN: expect.anything() }]);
    expect(template.Outputs?.['SiteUrl']?.Value).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [expect.any(String), 'DomainName'] }]] });
  });

  it('runs the index rewrite as a cloudfront-js-2.0 viewer-request function', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    // The site distribution's (the console's, on the CDN host, is tested in console.test.ts).
    const functions = Object.entries(template.Resources)
      .filter(([id, r]) => r.Type === 'AWS::CloudFront::Function' && !id.startsWith('Console'))
      .map(([, r]) => r);

    // Assess
    expect(functions).toHaveLength(1);
    expect(functions[0]!.Properties).toMatchObject({ AutoPublish: true, FunctionConfig: { Runtime: 'cloudfront-js-2.0' } });
    expect(functions[0]!.Properties!['FunctionCode']).toContain('index.html');
  });

  it('keeps the websites bucket private', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    const buckets = Object.values(template.Resources).filter((r) => r.Type === 'AWS::S3::Bucket');
    const policies = Object.values(template.Resources).filter((r) => r.Type === 'AWS::S3::BucketPolicy');

    // Assess
    expect(buckets.length).toBeGreaterThan(0);
    for (const bucket of buckets)
      expect(bucket.Properties?.['PublicAccessBlockConfiguration']).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
    for (const policy of policies) expect(JSON.stringify(policy.Properties?.['PolicyDocument'])).not.toMatch(/"Principal":"\*"(?![^}]*"Effect":"Deny")/);
  });

  it('grants CreateInvalidation to the websites function alone, which is told the distribution id', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const websites = logicalIdOf(platform, platform.stack.functions.areas.get('websites')!.function);

    // Act
    const granted = platformFunctions(platform).filter(([, fn]) => {
      const role = (fn.Properties?.['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return roleStatements(template, role).some((s) => [s.Action].flat().includes('cloudfront:CreateInvalidation'));
    });

    // Assess
    expect(granted.map(([id]) => id)).toEqual([websites]);
    expect(template.Resources[websites]!.Properties?.['Environment'].Variables.SITE_DISTRIBUTION_ID).toEqual({ Ref: expect.any(String) });
  });

  it('with a site domain, serves each site on a name of its own under the wildcard certificate, and SITE_URL is the domain', () => {
    // Prepare
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/abc';

    // Act
    const withDomain = siteDistribution({ name: 'sites.example.com', certificateArn });
    const without = siteDistribution();
    const configOf = (template: typeof withDomain.template) =>
      Object.values(template.Resources).find((r) => r.Type === 'AWS::CloudFront::Distribution')!.Properties!['DistributionConfig'];
    const codeOf = (template: typeof withDomain.template) =>
      String(Object.values(template.Resources).find((r) => r.Type === 'AWS::CloudFront::Function')!.Properties!['FunctionCode']);

    // Assess
    expect(configOf(withDomain.template).Aliases).toEqual(['sites.example.com', '*.sites.example.com']);
    expect(configOf(withDomain.template).ViewerCertificate).toMatchObject({ AcmCertificateArn: certificateArn, SslSupportMethod: 'sni-only' });
    expect(codeOf(withDomain.template)).toContain("'.sites.example.com'");
    expect(withDomain.site.url).toBe('https://sites.example.com');
    expect(configOf(without.template).Aliases).toBeUndefined();
    expect(codeOf(without.template)).not.toContain('SUFFIX');
  });
});
