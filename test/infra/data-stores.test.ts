import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { areaNamed, buckets, resourcesOf, routes, tables } from '../../lib/manifest/index.ts';
import type { TableSpec } from '../../lib/manifest/types.ts';
import { RUN_TOKEN_SECRET_LENGTH } from '../../lib/cloud/data-stores.ts';
import { json, logicalIdOf, platformFunctions, synthPlatform, TEST_STACK } from './synth-platform.ts';

const attributeType = (spec: TableSpec, name: string) => (spec.numberKeys?.includes(name) ? 'N' : 'S');

describe('tables', () => {
  it.each(tables.map((t) => [t.name, t] as const))('%s has its keys, indexes, TTL, PITR, encryption and RETAIN', (_name, spec: TableSpec) => {
    // Prepare
    const { main } = synthPlatform();
    const keyNames = [spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])].filter(
      (k): k is string => k !== undefined,
    );

    // Act
    const found = main.findResources('AWS::DynamoDB::Table', { Properties: { TableName: `${TEST_STACK}-${spec.name}` } });

    // Assess
    const [table, ...others] = Object.values(found);
    expect(others).toHaveLength(0);
    expect(table).toBeDefined();
    expect(table!['DeletionPolicy']).toBe('Retain');
    expect(table!['UpdateReplacePolicy']).toBe('Retain');
    const props = table!['Properties'];
    expect(props.KeySchema).toEqual([
      { AttributeName: spec.partitionKey, KeyType: 'HASH' },
      ...(spec.sortKey === undefined ? [] : [{ AttributeName: spec.sortKey, KeyType: 'RANGE' }]),
    ]);
    expect(props.AttributeDefinitions).toHaveLength(new Set(keyNames).size);
    expect(props.AttributeDefinitions).toEqual(
      expect.arrayContaining([...new Set(keyNames)].map((name) => ({ AttributeName: name, AttributeType: attributeType(spec, name) }))),
    );
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    // SSEEnabled alone means KMS with the AWS managed key (aws/dynamodb); absent would be an AWS owned key.
    expect(props.SSESpecification).toEqual({ SSEEnabled: true });
    expect(props.TimeToLiveSpecification).toEqual(spec.ttlAttribute === undefined ? undefined : { AttributeName: spec.ttlAttribute, Enabled: true });
    expect(props.GlobalSecondaryIndexes ?? []).toEqual(
      (spec.indexes ?? []).map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          ...(index.sortKey === undefined ? [] : [{ AttributeName: index.sortKey, KeyType: 'RANGE' }]),
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    );
  });

  it('has exactly the manifest tables', () => {
    // Prepare
    const { main } = synthPlatform();

    // Act
    const names = Object.values(main.findResources('AWS::DynamoDB::Table')).map((t) => t['Properties'].TableName);

    // Assess
    expect(names.sort()).toEqual(tables.map((t) => `${TEST_STACK}-${t.name}`).sort());
  });
});

describe('buckets', () => {
  it.each(buckets.map((b) => [b.name]))('%s is private, encrypted, versioned, TLS-only and retained', (name) => {
    // Prepare
    const { main } = synthPlatform();
    const bucketName = { 'Fn::Join': ['', [`${TEST_STACK}-`, { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }, `-${name}`]] };

    // Act
    const found = main.findResources('AWS::S3::Bucket', { Properties: { BucketName: bucketName } });

    // Assess
    const entries = Object.entries(found);
    expect(entries).toHaveLength(1);
    const [logicalId, bucket] = entries[0]!;
    expect(bucket['DeletionPolicy']).toBe('Retain');
    expect(bucket['Properties']).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: {
        Rules: expect.arrayContaining([
          { NoncurrentVersionExpiration: { NoncurrentDays: 30 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 }, Status: 'Enabled' },
        ]),
      },
    });
    main.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalId },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it.each(buckets.map((b) => [b.name, b.browserUploads === true] as const))(
    '%s lets browsers use its presigned URLs (CORS) only if it takes browser uploads (%s)',
    (name, browserUploads) => {
      // Prepare
      const { main } = synthPlatform();
      const bucketName = { 'Fn::Join': ['', [`${TEST_STACK}-`, { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }, `-${name}`]] };

      // Act
      const [bucket] = Object.values(main.findResources('AWS::S3::Bucket', { Properties: { BucketName: bucketName } }));

      // Assess
      expect(bucket!['Properties'].CorsConfiguration).toEqual(
        browserUploads
          ? {
              CorsRules: [
                { AllowedOrigins: ['*'], AllowedMethods: ['PUT', 'POST', 'GET', 'HEAD'], AllowedHeaders: ['*'], ExposedHeaders: ['ETag'], MaxAge: 3000 },
              ],
            }
          : undefined,
      );
    },
  );

  it('is named BUCKET_PREFIX + name, the prefix every function reads', () => {
    // Prepare
    const platform = synthPlatform();
    const functions = platformFunctions(platform).map(([, f]) => f);

    // Act
    const prefixes = functions.map((f) => f.Properties?.['Environment'].Variables.BUCKET_PREFIX);
    const bucketNames = Object.values(json(platform.main).Resources)
      .filter((r) => r.Type === 'AWS::S3::Bucket')
      .map((r) => r.Properties?.['BucketName']);

    // Assess
    expect(functions.length).toBeGreaterThan(0);
    for (const prefix of prefixes) {
      const [, parts] = prefix['Fn::Join'] as [string, unknown[]];
      const last = parts.at(-1) as string;
      // The bucket name is the prefix's parts with the bucket name glued onto the last literal.
      expect(bucketNames).toContainEqual({ 'Fn::Join': ['', [...parts.slice(0, -1), `${last}${buckets[0]!.name}`]] });
    }
  });

  it('prefixes table names with TABLE_PREFIX', () => {
    // Prepare
    const platform = synthPlatform();

    // Act
    const prefixes = new Set(platformFunctions(platform).map(([, f]) => f.Properties?.['Environment'].Variables.TABLE_PREFIX));

    // Assess
    expect([...prefixes]).toEqual([`${TEST_STACK}-`]);
  });
});

describe('secrets key', () => {
  it('is a retained customer key with rotation', () => {
    // Prepare
    const { main } = synthPlatform();

    // Act
    const keys = Object.values(main.findResources('AWS::KMS::Key'));

    // Assess
    expect(keys).toHaveLength(1);
    expect(keys[0]!['DeletionPolicy']).toBe('Retain');
    expect(keys[0]!['Properties'].EnableKeyRotation).toBe(true);
  });
});

describe('run-token secret', () => {
  /** The secret's logical id, and the functions that authenticate requests: every area and streaming function with a route that reads credentials. */
  function secret() {
    const platform = synthPlatform();
    const template = json(platform.main);
    const { areas, streams, queueConsumers } = platform.stack.functions;
    // Those authenticating requests, and those declaring `runTokens` to mint them elsewhere (the cron runs' queue consumer).
    const authenticating = [
      ...[...areas].filter(([area]) => resourcesOf([areaNamed(area)]).runTokenSecret).map(([, fn]) => fn),
      // A streaming host authenticates when one of its routes does (the site host's only route is public).
      ...[...streams]
        .filter(
          ([host]) =>
            resourcesOf(
              [],
              routes.filter((r) => r.host === host && r.mode === 'streaming'),
            ).runTokenSecret,
        )
        .map(([, s]) => s.function),
      ...[...queueConsumers].filter(([area]) => resourcesOf([areaNamed(area)], []).runTokenSecret).map(([, fn]) => fn),
    ];
    return { platform, template, secretId: logicalIdOf(platform, platform.stack.data.runTokenSecret), authenticating };
  }

  it('is one retained secret with a generated value of letters and digits, never in the template', () => {
    // Prepare
    const { platform, template, secretId } = secret();
    // The other secrets of the stack: the origin secret of each service host (its distribution and load balancer).
    const origins = [...(platform.stack.services?.hosts.values() ?? [])].map((h) => logicalIdOf(platform, h.originSecret));

    // Act
    const all = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret');
    const secrets = all.filter(([id]) => !origins.includes(id));

    // Assess: run-token.ts wants at least 32 characters.
    expect(all.length).toBe(1 + origins.length);
    expect(secrets.map(([id]) => id)).toEqual([secretId]);
    const [, resource] = secrets[0]!;
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
    expect(RUN_TOKEN_SECRET_LENGTH).toBeGreaterThanOrEqual(64);
    expect(resource.Properties?.['GenerateSecretString']).toEqual({ PasswordLength: RUN_TOKEN_SECRET_LENGTH, ExcludePunctuation: true, IncludeSpace: false });
    expect(resource.Properties?.['SecretString']).toBeUndefined();
  });

  it('is read by the functions that authenticate requests or mint run tokens only, which find it in RUN_TOKEN_SECRET_ARN', () => {
    // Prepare
    const { platform, template, secretId, authenticating } = secret();
    const { fallback } = platform.stack.functions;
    const roleOf = (fn: (typeof authenticating)[number]) => ({ Ref: logicalIdOf(platform, fn.function.role!) });

    // Act: every statement of the template naming the secret, with the roles it is attached to.
    // The rotation function (on in this preset) writes the secret's versions: its own grant, checked apart.
    const rotator =
      platform.stack.runTokenRotation === undefined
        ? undefined
        : JSON.stringify({ Ref: logicalIdOf(platform, platform.stack.runTokenRotation.function.role!) });
    const allGrants = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) =>
        (p.Properties?.['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown }[])
          .filter((s) => JSON.stringify(s.Resource).includes(`"${secretId}"`))
          .flatMap((s) => (p.Properties?.['Roles'] as unknown[]).map((role) => ({ role, actions: [s.Action].flat().sort(), resource: s.Resource }))),
      );
    const grants = allGrants.filter((g) => JSON.stringify(g.role) !== rotator);
    const rotatorGrants = allGrants.filter((g) => JSON.stringify(g.role) === rotator);
    const variables = Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id, r]) => [id, r.Properties?.['Environment']?.Variables?.RUN_TOKEN_SECRET_ARN] as const);

    // Assess
    expect(authenticating.length).toBeGreaterThan(0);
    expect(grants.map((g) => JSON.stringify(g.role)).sort()).toEqual(authenticating.map((fn) => JSON.stringify(roleOf(fn))).sort());
    for (const g of grants)
      expect(g).toMatchObject({ actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'], resource: { Ref: secretId } });
    const expected = new Set(authenticating.map((fn) => logicalIdOf(platform, fn.function)));
    for (const [id, value] of variables) expect(value, id).toEqual(expected.has(id) ? { Ref: secretId } : undefined);
    expect(expected.has(logicalIdOf(platform, fallback.function))).toBe(false);
    if (rotator !== undefined) expect(rotatorGrants.flatMap((g) => g.actions)).toEqual(expect.arrayContaining(['secretsmanager:PutSecretValue']));
    // No resource policy grants anything; with rotation CDK adds one denying the rotator DeleteSecret.
    const policyStatements = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::SecretsManager::ResourcePolicy')
      .flatMap((r) => r.Properties?.['ResourcePolicy'].Statement as { Effect: string; Action: string }[]);
    expect(policyStatements.filter((statement) => statement.Effect !== 'Deny')).toEqual([]);
    if (rotator === undefined) expect(policyStatements).toEqual([]);
  });
});
