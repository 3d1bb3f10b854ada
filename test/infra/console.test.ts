/**
 * The web console in the cloud (issue 39): built at synth into the CDN host's bucket under
 * `console/`, served by that distribution with the console's security headers, its `config.json`
 * naming the API and the user pool's app client, its URL an output.
 */
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../lib/console/build-console.ts';
import { json, synthPlatform } from './synth-platform.ts';

describe('console in the cloud', () => {
  it('is served from the CDN bucket with its own headers, told where the API is and how to sign in', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const resources = Object.entries(template.Resources);

    // Act
    const distribution = resources.find(
      ([, r]) => r.Type === 'AWS::CloudFront::Distribution' && String(r.Properties?.['DistributionConfig'].Comment).includes('embed widget'),
    )![1];
    const behavior = (distribution.Properties!['DistributionConfig'].CacheBehaviors as Record<string, unknown>[]).find(
      (b) => b['PathPattern'] === '/console/*',
    );
    const headers = resources.find(([, r]) => r.Type === 'AWS::CloudFront::ResponseHeadersPolicy' && JSON.stringify(r.Properties).includes('web console'))![1];
    const deployments = resources.filter(([id, r]) => r.Type === 'Custom::CDKBucketDeployment' && id.startsWith('Console')).map(([, r]) => r);
    const page = deployments.find((d) => JSON.stringify(d.Properties?.['SystemMetadata']).includes('no-cache'));
    const files = deployments.find((d) => JSON.stringify(d.Properties?.['SystemMetadata']).includes('immutable'));

    // Assess
    expect(behavior).toMatchObject({ ViewerProtocolPolicy: 'redirect-to-https', AllowedMethods: ['GET', 'HEAD'], Compress: true });
    expect(behavior!['TargetOriginId']).toBe(distribution.Properties!['DistributionConfig'].DefaultCacheBehavior.TargetOriginId);
    expect((behavior!['FunctionAssociations'] as unknown[]).length).toBe(1);
    expect(headers.Properties!['ResponseHeadersPolicyConfig'].SecurityHeadersConfig).toMatchObject({
      ContentSecurityPolicy: { ContentSecurityPolicy: CONSOLE_CSP, Override: true },
      FrameOptions: { FrameOption: 'DENY', Override: true },
    });
    expect(files).toBeDefined();
    expect(files!.Properties?.['Prune']).toBe(false);
    // config.json is written at deployment: the API's URL and the app client are tokens until then.
    const markers = JSON.stringify(page!.Properties?.['SourceMarkers']);
    expect(markers).toMatch(/"Ref":"ApiRestApi[0-9A-F]+"/);
    expect(markers).toMatch(/"Ref":"IdentityUserPoolAppClient[0-9A-F]+"/);
    expect(JSON.stringify(page!.Properties?.['DistributionPaths'])).toContain('/console/config.json');
    expect(JSON.stringify(template.Outputs?.['ConsoleUrl']?.Value)).toContain('/console/');
  });
});
