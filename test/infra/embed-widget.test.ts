/**
 * The CDN host in the cloud (issue 19): the widget, built at synth, in a private bucket that only a
 * CloudFront distribution reads, at its current and versioned paths; its URL is CDN_URL for the
 * functions (the create response's snippet) and the CdnUrl output.
 */
import { describe, expect, it } from 'vitest';
import { json, synthPlatform } from './synth-platform.ts';

describe('CDN host', () => {
  it('serves the widget from a private bucket through CloudFront, and publishes its URL', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const cdn = platform.stack.assetDistributions.get('cdn')!;

    // Act
    const distribution = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::CloudFront::Distribution' && String(r.Properties?.['DistributionConfig'].Comment).includes('embed widget'),
    )!;
    const config = distribution.Properties!['DistributionConfig'];
    // The widget's own deployments (the console's are on the same bucket: test/infra/console.test.ts).
    const deployments = Object.entries(template.Resources)
      .filter(([id, r]) => r.Type === 'Custom::CDKBucketDeployment' && !id.startsWith('Console'))
      .map(([, r]) => r);
    const embedFunction = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties?.['Environment'] ?? {}).includes('CDN_URL'),
    );
    const buckets = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::S3::Bucket' && r.Properties?.['PublicAccessBlockConfiguration']?.['BlockPublicAcls'] === true,
    );

    // Assess
    expect(cdn).toBeDefined();
    // One origin, the bucket, for the widget and the console alike.
    expect(config.Origins).toHaveLength(1);
    expect(config.Origins[0].OriginAccessControlId).toBeDefined();
    expect(config.Origins[0].S3OriginConfig).toBeDefined();
    expect(config.DefaultCacheBehavior).toMatchObject({ AllowedMethods: ['GET', 'HEAD'], ViewerProtocolPolicy: 'redirect-to-https', Compress: true });
    expect(deployments).toHaveLength(2);
    const cacheControls = deployments.map((d) => JSON.stringify(d.Properties?.['SystemMetadata']));
    expect(cacheControls.some((c) => c.includes('immutable'))).toBe(true);
    expect(cacheControls.some((c) => c.includes('must-revalidate'))).toBe(true);
    expect(buckets.length).toBeGreaterThan(0);
    expect(embedFunction).toBeDefined();
    expect(template.Outputs?.['CdnUrl']?.Value).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [expect.any(String), 'DomainName'] }]] });
  });
});
