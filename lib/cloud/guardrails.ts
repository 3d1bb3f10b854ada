import { Aspects, CfnCondition, CfnMapping, CfnResource, Duration, Fn, RemovalPolicy, Stack, type IAspect } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnDistribution } from 'aws-cdk-lib/aws-cloudfront';
import { FlowLogDestination, FlowLogTrafficType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { ApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { AccountPrincipal, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Architecture, Runtime, type CfnFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { fileURLToPath } from 'node:url';
import { Construct, type IConstruct } from 'constructs';
import { ESM_REQUIRE_BANNER } from './platform-function.ts';

/**
 * The brakes and records of the cloud stack (deploy options, lib/cloud/deploy-options.ts): access
 * logs for every bucket, distribution and load balancer into one log bucket, a WAF web ACL on the
 * API stage, reserved concurrency, and the removal policy of a stage. Applied to the finished stack
 * rather than threaded through each construct, so a bucket or distribution added later is logged
 * and removed like the others without anyone remembering to.
 */

/** One bucket receiving the access logs of every other bucket, every distribution and the load balancer. */
export class AccessLogBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: { readonly retentionDays: number; readonly removalPolicy: RemovalPolicy }) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      // SSE-S3: CloudFront's and the load balancer's log delivery cannot write to SSE-KMS buckets.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // CloudFront's standard logs are delivered with an ACL grant (awslogsdelivery), which needs ACLs enabled.
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(props.retentionDays), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: props.removalPolicy === RemovalPolicy.DESTROY,
    });
  }

  /**
   * Every other bucket of `scope` logs here (`s3/<logical id>/`), every distribution (`cloudfront/<id>/`)
   * and every Application Load Balancer (`alb/<id>/`).
   */
  logEverythingIn(scope: IConstruct): void {
    const stack = Stack.of(this);
    const logBucket = this.bucket.node.defaultChild as CfnBucket;
    // S3 server access logging: the logging service writes with this bucket policy (no ACLs).
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject'],
        principals: [new ServicePrincipal('logging.s3.amazonaws.com')],
        resources: [this.bucket.arnForObjects('s3/*')],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    let albs = 0;
    for (const construct of scope.node.findAll()) {
      if (construct instanceof CfnBucket && construct !== logBucket && Stack.of(construct) === stack) {
        construct.loggingConfiguration = { destinationBucketName: this.bucket.bucketName, logFilePrefix: `s3/${stack.getLogicalId(construct)}/` };
      } else if (construct instanceof CfnDistribution) {
        construct.addPropertyOverride('DistributionConfig.Logging', {
          Bucket: this.bucket.bucketRegionalDomainName,
          Prefix: `cloudfront/${Stack.of(construct).getLogicalId(construct)}/`,
          IncludeCookies: false,
        });
      } else if (construct instanceof Vpc) {
        construct.addFlowLog('FlowLogs', { destination: FlowLogDestination.toS3(this.bucket, 'vpc/'), trafficType: FlowLogTrafficType.REJECT });
      } else if (construct instanceof ApplicationLoadBalancer) {
        const prefix = `alb/${stack.getLogicalId(construct.node.defaultChild as CfnResource)}`;
        construct.setAttribute('access_logs.s3.enabled', 'true');
        construct.setAttribute('access_logs.s3.bucket', this.bucket.bucketName);
        construct.setAttribute('access_logs.s3.prefix', prefix);
        albs++;
      }
    }
    if (albs > 0) this.allowLoadBalancerLogs();
  }

  /**
   * Elastic Load Balancing writes its logs as a regional account in the regions older than August
   * 2022 and as a service principal in the others. The stack is region-agnostic, so both are
   * allowed: the account through a mapping (its own account in the newer regions, which grants
   * nothing new).
   */
  private allowLoadBalancerLogs(): void {
    const stack = Stack.of(this);
    const regions = RegionInfo.regions.filter((r) => r.partition === 'aws' || r.partition === undefined);
    const mapping = new CfnMapping(this, 'ElbLogAccounts', {
      mapping: Object.fromEntries(regions.map((r) => [r.name, { account: r.elbv2Account ?? 'self' }])),
      lazy: false,
    });
    const mapped = mapping.findInMap(stack.region, 'account');
    const newerRegion = new CfnCondition(this, 'ElbLogsByService', { expression: Fn.conditionEquals(mapped, 'self') });
    const account = Fn.conditionIf(newerRegion.logicalId, stack.account, mapped).toString();
    for (const principal of [new ServicePrincipal('logdelivery.elasticloadbalancing.amazonaws.com'), new AccountPrincipal(account)])
      this.bucket.addToResourcePolicy(
        new PolicyStatement({ actions: ['s3:PutObject'], principals: [principal], resources: [this.bucket.arnForObjects('alb/*')] }),
      );
  }
}

/**
 * AWS WAF on the API stage: the AWS managed common rule set (its body-size rule only counts: agent
 * sources and knowledge uploads are larger than its 8 KB), known bad inputs, Amazon's IP reputation
 * list, and a rate limit per client address. CloudFront distributions would need a web ACL made in
 * us-east-1, which a stack of another region cannot create; they are left to the operator.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: { readonly stage: Stage; readonly ratePerFiveMinutes: number; readonly name: string }) {
    super(scope, id);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    const managed = (name: string, priority: number, countOnly: readonly string[] = []): CfnWebACL.RuleProperty => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ...(countOnly.length === 0 ? {} : { ruleActionOverrides: countOnly.map((rule) => ({ name: rule, actionToUse: { count: {} } })) }),
        },
      },
      visibilityConfig: visibility(name),
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(props.name),
      rules: [
        {
          name: 'RatePerAddress',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: props.ratePerFiveMinutes, aggregateKeyType: 'IP' } },
          visibilityConfig: visibility('RatePerAddress'),
        },
        managed('AWSManagedRulesAmazonIpReputationList', 1),
        managed('AWSManagedRulesKnownBadInputsRuleSet', 2),
        managed('AWSManagedRulesCommonRuleSet', 3, ['SizeRestrictions_BODY']),
      ],
    });
    new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}

/** Reserved concurrency of `fn`: both its share of the account's pool and its ceiling. */
export function reserveConcurrency(fn: IFunction, executions: number): void {
  if (executions <= 0) return;
  (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = executions;
}

/**
 * `destroy`: every resource of the stack (nested stacks included) is deleted with it, the
 * stateful ones too (tables, the KMS key, the user pool, secrets, log groups); buckets are emptied
 * by the constructs that made them (`autoDeleteObjects`). CloudFormation would otherwise keep what
 * CDK retains by default: a `dev` stage must leave nothing behind.
 */
export function applyRemovalPolicy(scope: IConstruct, policy: 'retain' | 'destroy'): void {
  if (policy === 'retain') return;
  Aspects.of(scope).add(new DestroyEverything());
}

class DestroyEverything implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof CfnResource && (node.cfnOptions.deletionPolicy !== undefined || node.cfnOptions.updateReplacePolicy !== undefined))
      node.applyRemovalPolicy(RemovalPolicy.DESTROY);
  }
}

/**
 * Rotates the run-token secret every `days` days with the function of
 * lib/cloud/rotation/run-token-rotation.handler.ts (Secrets Manager calls it; it needs no network
 * but Secrets Manager's).
 */
export class RunTokenRotation extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: { readonly secret: Secret; readonly days: number; readonly removalPolicy: RemovalPolicy }) {
    super(scope, id);
    this.function = new NodejsFunction(this, 'Function', {
      entry: fileURLToPath(new URL('./rotation/run-token-rotation.handler.ts', import.meta.url)),
      description: 'Agent platform: rotates the run-token secret',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      timeout: Duration.seconds(30),
      logGroup: new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: props.removalPolicy }),
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        externalModules: ['@aws-sdk/*'],
        logLevel: LogLevel.WARNING,
        banner: ESM_REQUIRE_BANNER,
      },
    });
    props.secret.addRotationSchedule('Schedule', { rotationLambda: this.function, automaticallyAfter: Duration.days(props.days) });
  }
}
