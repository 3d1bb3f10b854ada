import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { BucketSpec, TableSpec } from '../manifest/types.ts';

export interface PlatformDataProps {
  /** Table specs from the manifest; each becomes one DynamoDB table. */
  readonly tables: readonly TableSpec[];
  /** Bucket specs from the manifest; each becomes one S3 bucket. */
  readonly buckets: readonly BucketSpec[];
  /** Prefix of every physical table name; the functions read it as TABLE_PREFIX. */
  readonly tablePrefix: string;
  /** Prefix of every physical bucket name (globally unique); the functions read it as BUCKET_PREFIX. */
  readonly bucketPrefix: string;
  /** Key prefixes whose objects expire, e.g. usage-log bodies after the records that point at them. @default none */
  readonly expirations?: readonly PrefixExpiration[];
}

/** Objects under `prefix` in `bucket` are deleted `afterDays` days after they were written. */
export interface PrefixExpiration {
  /** Logical bucket name from the manifest. */
  readonly bucket: string;
  /** Key prefix, with its trailing slash. */
  readonly prefix: string;
  readonly afterDays: number;
}

/**
 * Tables and buckets of the platform, built from the manifest, and the KMS key that seals users'
 * third-party keys. All keep their data when the stack is deleted (RETAIN): user data must never
 * disappear with a `cdk destroy`.
 */
export class PlatformData extends Construct {
  readonly tables: ReadonlyMap<string, Table>;
  readonly buckets: ReadonlyMap<string, Bucket>;
  /**
   * Wraps the data keys of stored third-party secrets (KEYS_KMS_KEY_ID). A customer key, unlike the
   * tables' AWS managed one: its policy is ours to tighten and its use is audited apart from theirs.
   */
  readonly secretsKey: Key;

  constructor(scope: Construct, id: string, props: PlatformDataProps) {
    super(scope, id);
    this.tables = new Map(props.tables.map((spec) => [spec.name, this.table(spec, props.tablePrefix)]));
    const expirations = props.expirations ?? [];
    for (const e of expirations) {
      if (!props.buckets.some((b) => b.name === e.bucket)) throw new Error(`Expiration of ${e.prefix} names an unknown bucket ${e.bucket}.`);
      if (!Number.isInteger(e.afterDays) || e.afterDays < 1) throw new Error(`Expiration of ${e.prefix} needs a whole number of days (at least 1), not ${e.afterDays}.`);
    }
    this.buckets = new Map(props.buckets.map((spec) => [spec.name, this.bucket(spec, props.bucketPrefix, expirations.filter((e) => e.bucket === spec.name))]));
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Agent platform: wraps the data keys of users\' stored third-party keys',
      enableKeyRotation: true,
      // Losing the key loses every sealed secret.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Read and write on every table (with its indexes) and every bucket; sealing and opening secrets. */
  grantReadWrite(grantee: IGrantable): void {
    for (const table of this.tables.values()) table.grantReadWriteData(grantee);
    for (const bucket of this.buckets.values()) bucket.grantReadWrite(grantee);
    // Envelope encryption needs only these two (functions/core/secret-box.ts).
    this.secretsKey.grant(grantee, 'kms:GenerateDataKey', 'kms:Decrypt');
  }

  private table(spec: TableSpec, prefix: string): Table {
    const attribute = (name: string): Attribute => ({ name, type: spec.numberKeys?.includes(name) ? AttributeType.NUMBER : AttributeType.STRING });
    const table = new Table(this, `Table-${spec.name}`, {
      tableName: `${prefix}${spec.name}`,
      partitionKey: attribute(spec.partitionKey),
      sortKey: spec.sortKey === undefined ? undefined : attribute(spec.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS managed KMS key: encrypted with KMS and auditable in CloudTrail, without a customer key
      // to pay for, retain alongside RETAIN tables, and keep in every grant.
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: spec.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of spec.indexes ?? []) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        sortKey: index.sortKey === undefined ? undefined : attribute(index.sortKey),
        projectionType: ProjectionType.ALL,
      });
    }
    return table;
  }

  private bucket(spec: BucketSpec, prefix: string, expirations: readonly PrefixExpiration[]): Bucket {
    return new Bucket(this, `Bucket-${spec.name}`, {
      bucketName: `${prefix}${spec.name}`,
      // SSE-S3 rather than SSE-KMS: no per-request KMS cost or throttling on presigned downloads, and
      // a future CloudFront origin (sites, widget) can read it through OAC, which the aws/s3 managed
      // key's policy would not allow.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      // Versions are the undo window for overwrites and deletes; a month of them bounds the cost.
      versioned: true,
      lifecycleRules: [
        { noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(7) },
        // In a versioned bucket expiring only hides the object behind a delete marker; the old version
        // then goes a day later (the shorter of two overlapping expirations wins), not after the
        // month of undo above: data with a retention period must not outlive it by a month.
        ...expirations.map((e) => ({ id: `expire-${e.prefix.replace(/[^A-Za-z0-9-]+/g, '')}`, prefix: e.prefix, expiration: Duration.days(e.afterDays), noncurrentVersionExpiration: Duration.days(1) })),
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
