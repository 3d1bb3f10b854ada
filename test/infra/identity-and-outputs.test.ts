import { describe, expect, it } from 'vitest';
import { routes } from '../../lib/manifest/index.ts';
import { json, logicalIdOf, synthPlatform, TEST_STAGE } from './synth-platform.ts';

describe('Cognito', () => {
  it('has a retained user pool with email sign-in, self sign-up and a strong password policy', () => {
    // Prepare
    const { main } = synthPlatform();

    // Act
    const pools = Object.values(main.findResources('AWS::Cognito::UserPool'));

    // Assess
    expect(pools).toHaveLength(1);
    expect(pools[0]!['DeletionPolicy']).toBe('Retain');
    expect(pools[0]!['Properties']).toMatchObject({
      UsernameAttributes: ['email'],
      AutoVerifiedAttributes: ['email'],
      // Closed by default: operators invite (`agent-platform cloud invite`), deploy option selfSignUp opens it.
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Policies: { PasswordPolicy: { MinimumLength: 12, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true } },
    });
  });

  it('has an app client without a secret', () => {
    // Prepare
    const { main } = synthPlatform();

    // Act
    const clients = Object.values(main.findResources('AWS::Cognito::UserPoolClient'));

    // Assess
    expect(clients).toHaveLength(1);
    expect(clients[0]!['Properties'].GenerateSecret).toBe(false);
    // The password flow: what the AWS CLI and `agent-platform login --stack` sign in with.
    expect(clients[0]!['Properties'].ExplicitAuthFlows).toEqual(
      expect.arrayContaining(['ALLOW_USER_SRP_AUTH', 'ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH']),
    );
  });
});

describe('outputs', () => {
  /**
   * The output's value with the API id and pseudo parameters shown by name, and the host of a
   * function URL as `{url host of <logical id>}`, for readable expectations.
   */
  function rendered(value: unknown): string {
    if (typeof value === 'string') return value;
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join !== undefined) return join[1].map(rendered).join(join[0]);
    const select = (value as { 'Fn::Select'?: [number, { 'Fn::Split': [string, { 'Fn::GetAtt': [string, string] }] }] })['Fn::Select'];
    if (select !== undefined && select[0] === 2 && select[1]['Fn::Split'][0] === '/' && select[1]['Fn::Split'][1]['Fn::GetAtt'][1] === 'FunctionUrl') {
      return `{url host of ${select[1]['Fn::Split'][1]['Fn::GetAtt'][0]}}`;
    }
    const domain = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (domain !== undefined && domain[1] === 'DomainName') return `{domain of ${domain[0]}}`;
    const ref = (value as { Ref?: string }).Ref;
    if (ref !== undefined) return ref.startsWith('AWS::') ? `{${ref}}` : '{api}';
    throw new Error(`Unexpected output part ${JSON.stringify(value)}`);
  }

  it('gives every host URL: the streaming function URL, the site distribution, the others mirroring the local layout on the API stage', () => {
    // Prepare
    const platform = synthPlatform();
    const outputs = json(platform.main).Outputs ?? {};
    const base = `https://{api}.execute-api.{AWS::Region}.{AWS::URLSuffix}/${TEST_STAGE}`;
    const stream = platform.stack.functions.streams.get('stream');
    const streamUrl = stream === undefined ? `${base}/stream` : `https://{url host of ${logicalIdOf(platform, stream.url)}}`;
    // The site host is its CloudFront distribution (site-distribution.ts).
    const site = platform.stack.functions.siteDistribution;
    const siteUrl = site === undefined ? `${base}/sites` : `https://{domain of ${logicalIdOf(platform, site.distribution)}}`;
    // The voice host is its service's CloudFront distribution (service-containers.ts).
    const voice = platform.stack.services?.hosts.get('voice');
    const voiceUrl = voice === undefined ? `${base.replace('https:', 'wss:')}/voice` : `wss://{domain of ${logicalIdOf(platform, voice.distribution)}}`;

    // The CDN host is the widget's distribution (asset-distribution.ts).
    const cdn = platform.stack.assetDistributions.get('cdn');
    const cdnUrl = cdn === undefined ? `${base}/cdn` : `https://{domain of ${logicalIdOf(platform, cdn.distribution)}}`;

    // Act
    const urls = Object.fromEntries(
      ['BaseUrl', 'StreamUrl', 'McpUrl', 'VoiceUrl', 'CdnUrl', 'SiteUrl', 'CodeUrl'].map((id) => [id, outputs[id] && rendered(outputs[id].Value)]),
    );

    // Assess
    expect(stream !== undefined).toBe(routes.some((r) => r.host === 'stream' && r.mode === 'streaming'));
    expect(urls).toEqual({
      BaseUrl: base,
      StreamUrl: streamUrl,
      McpUrl: base,
      VoiceUrl: voiceUrl,
      CdnUrl: cdnUrl,
      SiteUrl: siteUrl,
      CodeUrl: `${base}/code`,
    });
  });

  it('gives the user pool and client ids', () => {
    // Prepare
    const { main } = synthPlatform();
    const [pool] = Object.keys(main.findResources('AWS::Cognito::UserPool'));
    const [client] = Object.keys(main.findResources('AWS::Cognito::UserPoolClient'));

    // Act
    const outputs = json(main).Outputs ?? {};

    // Assess
    expect(outputs['UserPoolId']?.Value).toEqual({ Ref: pool });
    expect(outputs['UserPoolClientId']?.Value).toEqual({ Ref: client });
  });
});
