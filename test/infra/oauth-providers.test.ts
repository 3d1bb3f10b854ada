import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { CFN_LINT_MISSING, cfnLint, HAS_CFN_LINT } from '../support/cfn-lint.ts';
import { parseConfig } from '../../functions/core/config.ts';
import { providerSettings } from '../../functions/oauth/oauth.providers.ts';

import { oauthFunctionSettings, oauthProvidersFromContext, validateOAuthProviders, type OAuthProviders } from '../../lib/cloud/oauth-providers.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { cdkJsonContext, json, synthPlatform, withScratchOutdir, type TemplateJson, syntheticRoute, scratchEntriesDir } from './synth-platform.ts';
import { areas } from '../../lib/manifest/areas.ts';

const ARN_A = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:platform/oauth/provider-a-AbCdEf';
const ARN_C = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:platform/oauth/provider-c-123456';

const PROVIDERS: OAuthProviders = {
  provider_a: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    clientId: 'Iv1.client-a',
    scopes: 'read:user repo',
    clientSecretArn: ARN_A,
  },
  // A public client: no secret, no scopes.
  provider_b: { authorizeUrl: 'https://b.example.com/authorize?prompt=consent', tokenUrl: 'https://b.example.com/token', clientId: 'client-b' },
  provider_c: { authorizeUrl: 'https://c.example.com/authorize', tokenUrl: 'https://c.example.com/token', clientId: 'client-c', clientSecretArn: ARN_C },
};

const OAUTH_VARIABLE = /^OAUTH_/;

/** Every Lambda function of a template with its OAUTH_* variables. */
function oauthVariables(template: TemplateJson): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id, r]) => [id, Object.fromEntries(Object.entries(r.Properties?.['Environment']?.Variables ?? {}).filter(([name]) => OAUTH_VARIABLE.test(name)))]),
  );
}

/** Every policy statement of a template that names a Secrets Manager ARN literally, with the roles it is attached to. */
function literalSecretGrants(template: TemplateJson) {
  return Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((p) =>
      (p.Properties?.['PolicyDocument'].Statement as { Action: unknown; Resource: unknown }[])
        .filter((s) => JSON.stringify(s.Resource).includes('"arn:aws:secretsmanager:'))
        .map((statement) => ({ roles: p.Properties?.['Roles'], statement })),
    );
}

/** The platform with the manifest's routes and `PROVIDERS`, synthesized once; its assembly directory stays for cfn-lint. */
let configured: { stack: PlatformStack; template: TemplateJson; outdir: string } | undefined;
function synthConfigured() {
  if (configured !== undefined) return configured;
  const outdir = mkdtempSync(join(tmpdir(), 'platform-infra-oauth-'));
  const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new PlatformStack(app, 'oauth-test', { stage: 'test', version: '0', oauthProviders: PROVIDERS });
  app.synth();
  configured = { stack, template: Template.fromStack(stack).toJSON() as TemplateJson, outdir };
  return configured;
}
afterAll(() => {
  if (configured !== undefined) rmSync(configured.outdir, { recursive: true, force: true });
});

describe('OAuth providers in the cloud stack', () => {
  it('configures no provider by default: no function gets an OAUTH_ variable or a provider secret', () => {
    // Prepare
    const template = json(synthPlatform().main);

    // Act
    const variables = oauthVariables(template);

    // Assess
    expect(Object.values(variables).filter((v) => Object.keys(v).length > 0)).toEqual([]);
    expect(literalSecretGrants(template)).toEqual([]);
  });

  it("gives the oauth area's function each provider's settings and secret ARN, and no other function any of them", () => {
    // Prepare
    const { stack, template } = synthConfigured();
    const oauthFunction = stack.functions.areas.get('oauth');

    // Act
    const variables = oauthVariables(template);
    const oauthId = stack.getLogicalId(oauthFunction!.function.node.defaultChild as CfnElement);

    // Assess
    expect(oauthFunction).toBeDefined();
    expect(variables[oauthId]).toEqual({
      OAUTH_PROVIDER_A_AUTHORIZE_URL: 'https://github.com/login/oauth/authorize',
      OAUTH_PROVIDER_A_TOKEN_URL: 'https://github.com/login/oauth/access_token',
      OAUTH_PROVIDER_A_CLIENT_ID: 'Iv1.client-a',
      OAUTH_PROVIDER_A_SCOPES: 'read:user repo',
      OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: ARN_A,
      OAUTH_PROVIDER_B_AUTHORIZE_URL: 'https://b.example.com/authorize?prompt=consent',
      OAUTH_PROVIDER_B_TOKEN_URL: 'https://b.example.com/token',
      OAUTH_PROVIDER_B_CLIENT_ID: 'client-b',
      OAUTH_PROVIDER_C_AUTHORIZE_URL: 'https://c.example.com/authorize',
      OAUTH_PROVIDER_C_TOKEN_URL: 'https://c.example.com/token',
      OAUTH_PROVIDER_C_CLIENT_ID: 'client-c',
      OAUTH_PROVIDER_C_CLIENT_SECRET_ARN: ARN_C,
    });
    // Every other function: the other areas, the streaming hosts, the fallback and both runtimes.
    const others = Object.entries(variables).filter(([id]) => id !== oauthId);
    expect(others.length).toBeGreaterThan(5);
    for (const [id, v] of others) expect(v, id).toEqual({});
  });

  it('lets only the oauth role call GetSecretValue, on exactly the client secrets, and creates no secret for them', () => {
    // Prepare
    const { stack, template } = synthConfigured();
    const oauthRole = stack.getLogicalId(stack.functions.areas.get('oauth')!.function.role!.node.defaultChild as CfnElement);

    // Act
    const grants = literalSecretGrants(template);
    const secrets = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret');

    // Assess
    expect(grants).toEqual([
      { roles: [{ Ref: oauthRole }], statement: { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: expect.any(Array) } },
    ]);
    expect([...(grants[0]!.statement.Resource as string[])].sort()).toEqual([ARN_A, ARN_C].sort());
    // Only the platform's own (the run-token secret, and the voice origin's header value when voice
    // is on); the provider secrets are the operator's.
    expect(secrets.some(([id]) => id.includes('RunTokenSecret'))).toBe(true);
    expect(secrets.filter(([id]) => !/RunTokenSecret|OriginSecret/.test(id))).toEqual([]);
    expect(JSON.stringify(template)).not.toMatch(/OAUTH_PROVIDER_[ABC]_CLIENT_SECRET"/);
  });

  it('hands the functions settings their configuration accepts as a complete provider with a secret-store secret', () => {
    // Prepare
    const { environment } = oauthFunctionSettings(PROVIDERS);
    const config = parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-', ...environment }, areas);
    const reader = { read: async () => 'unused' };

    // Act
    const a = providerSettings(config, 'provider_a', reader);
    const b = providerSettings(config, 'provider_b', reader);

    // Assess
    expect(a).toMatchObject({ clientId: 'Iv1.client-a', scopes: ['read:user', 'repo'], clientSecret: { from: 'secret-store', secretId: ARN_A } });
    expect(b.clientSecret).toBeNull();
  });

  // Entries of the synthetic stacks go to their own directory inside the project, not among the real ones.
  const scratchEntries = scratchEntriesDir('oauth-entries-');
  afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

  it('gives them to a streaming function serving an oauth route too, and to no function when no route is in the oauth area', () => {
    // Prepare
    const demo = syntheticRoute({ method: 'GET', path: '/demo/{id}', area: 'demo', handler: 'get' });
    const oauthStream = syntheticRoute({ method: 'GET', path: '/oauth-live/{provider}', area: 'oauth', handler: 'live', host: 'stream', mode: 'streaming' });
    const knowing = (routes: RouteSpec[]) =>
      withScratchOutdir((outdir) => {
        const app = new App({ outdir, analyticsReporting: false, context: { 'aws:cdk:bundling-stacks': [] } });
        const stack = new PlatformStack(app, 'oauth-stream-test', {
          stage: 'test',
          version: '0',
          routes,
          entriesDir: scratchEntries,
          oauthProviders: PROVIDERS,
        });
        const template = Template.fromStack(stack).toJSON() as TemplateJson;
        const fns = [
          ...[...stack.functions.areas].map(([area, f]) => [`area ${area}`, f] as const),
          ...[...stack.functions.streams].map(([host, s]) => [`stream ${host}`, s.function] as const),
        ];
        const variables = oauthVariables(template);
        return {
          knowing: fns
            .filter(([, f]) => Object.keys(variables[stack.getLogicalId(f.function.node.defaultChild as CfnElement)]!).length > 0)
            .map(([name]) => name),
          grants: literalSecretGrants(template).length,
        };
      });

    // Act / Assess
    expect(knowing([demo, oauthStream])).toEqual({ knowing: ['stream stream'], grants: 1 });
    expect(knowing([demo])).toEqual({ knowing: [], grants: 0 });
  });
});

describe('oauthProviders validation', () => {
  const valid = PROVIDERS.provider_a!;

  it.each([
    ['an unknown provider', { github: valid }, /"github" is not a provider \(use provider_a, provider_b, provider_c\)/],
    [
      'an http authorize URL',
      { provider_a: { ...valid, authorizeUrl: 'http://github.com/login/oauth/authorize' } },
      /provider_a\.authorizeUrl must be an https URL, got "http:\/\/github\.com/,
    ],
    ['a token URL that is no URL', { provider_a: { ...valid, tokenUrl: 'github.com/token' } }, /provider_a\.tokenUrl must be an https URL/],
    ['a URL with a fragment', { provider_a: { ...valid, tokenUrl: 'https://github.com/token#x' } }, /provider_a\.tokenUrl must not have a fragment/],
    ['a URL with credentials', { provider_a: { ...valid, tokenUrl: 'https://user:pw@github.com/token' } }, /provider_a\.tokenUrl must not carry credentials/],
    ['a missing token URL', { provider_b: { authorizeUrl: 'https://b.example.com/a', clientId: 'b' } }, /provider_b\.tokenUrl is missing/],
    [
      'a missing client id',
      { provider_b: { authorizeUrl: 'https://b.example.com/a', tokenUrl: 'https://b.example.com/t' } },
      /provider_b\.clientId is missing/,
    ],
    ['an empty client id', { provider_b: { ...valid, clientId: ' ' } }, /provider_b\.clientId is missing/],
    ['scopes that are not a string', { provider_a: { ...valid, scopes: ['repo'] } }, /provider_a\.scopes must be a string/],
    [
      'a partial secret ARN',
      { provider_a: { ...valid, clientSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:github' } },
      /provider_a\.clientSecretArn must be the complete ARN/,
    ],
    [
      'a secret name instead of its ARN',
      { provider_a: { ...valid, clientSecretArn: 'platform/oauth/github' } },
      /provider_a\.clientSecretArn must be the complete ARN/,
    ],
    [
      'a plain client secret',
      { provider_a: { ...valid, clientSecret: 'hunter2-secret' } },
      /provider_a\.clientSecret is not accepted \(a client secret must not sit in the template/,
    ],
    ['an unknown field', { provider_a: { ...valid, tokenURL: 'https://x.example.com' } }, /provider_a\.tokenURL is not a known field/],
    ['a provider that is not an object', { provider_a: 'https://github.com' }, /provider_a must be an object/],
    ['a list instead of an object', [valid], /expected an object keyed by provider .*, got an array/],
  ])('refuses %s', (_name, value, message) => {
    // Act / Assess
    expect(() => validateOAuthProviders(value)).toThrow(message);
  });

  it('names every problem at once and never repeats a plain secret', () => {
    // Act
    const error = (() => {
      try {
        validateOAuthProviders({ provider_a: { ...valid, clientSecret: 'hunter2-secret', tokenUrl: 'http://x.example.com' }, provider_x: {} });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected an error');
    })();

    // Assess
    expect(error.message).toMatch(/^Invalid oauthProviders: /);
    expect(error.message).toContain('provider_a.clientSecret is not accepted');
    expect(error.message).toContain('provider_a.tokenUrl must be an https URL');
    expect(error.message).toContain('"provider_x" is not a provider');
    expect(error.message).not.toContain('hunter2-secret');
  });

  it('accepts complete ARNs of every partition, and no provider at all', () => {
    // Act / Assess
    for (const arn of [
      ARN_A,
      'arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:x-AbC123',
      'arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:a/b_c+d=e.f@g-abcdef',
    ]) {
      expect(validateOAuthProviders({ provider_a: { ...valid, clientSecretArn: arn } }).provider_a?.clientSecretArn).toBe(arn);
    }
    expect(validateOAuthProviders({})).toEqual({});
  });

  it('fails the synth of a stack given invalid providers', () => {
    // Act / Assess
    expect(() =>
      withScratchOutdir(
        (outdir) =>
          new PlatformStack(new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } }), 'oauth-invalid', {
            stage: 'test',
            version: '0',
            oauthProviders: { provider_a: { ...valid, tokenUrl: 'http://x' } },
          }),
      ),
    ).toThrow(/Invalid oauthProviders: provider_a\.tokenUrl must be an https URL/);
  });

  it('reads the context option as JSON text (-c) or as an object (cdk.json), and absent as none', () => {
    // Act / Assess
    expect(oauthProvidersFromContext(JSON.stringify(PROVIDERS))).toEqual(PROVIDERS);
    expect(oauthProvidersFromContext(PROVIDERS)).toEqual(PROVIDERS);
    for (const absent of [undefined, null, '']) expect(oauthProvidersFromContext(absent)).toBeUndefined();
    expect(() => oauthProvidersFromContext('{"provider_a":')).toThrow(/Invalid context "oauthProviders": not JSON/);
    expect(() => oauthProvidersFromContext('{"provider_a":{"clientId":"x"}}')).toThrow(/Invalid context "oauthProviders": provider_a\.authorizeUrl is missing/);
  });
});

describe('cfn-lint with OAuth providers', () => {
  it.skipIf(!HAS_CFN_LINT)(
    HAS_CFN_LINT ? 'finds no errors in the main template' : `finds no errors (${CFN_LINT_MISSING})`,
    () => {
      // Prepare
      const { outdir } = synthConfigured();
      const main = readdirSync(outdir).filter((f) => f.endsWith('.template.json') && !f.includes('.nested.'));

      // Act
      const run = cfnLint(main, outdir);
      const findings = run.findings;

      // Assess
      expect(main).toEqual(['oauth-test.template.json']);
      expect(findings.map((f) => `${f.Level} ${f.Rule.Id} ${f.Message}`)).toEqual([]);
      expect(run.status).toBe(0);
    },
    // A guard against a hang, not a check of speed: cfn-lint took over 60 s on a loaded machine.
    600_000,
  );
});
