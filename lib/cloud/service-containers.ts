import { Duration, Stack } from 'aws-cdk-lib';
import { CfnScalingPolicy, ScalableTarget, ServiceNamespace } from 'aws-cdk-lib/aws-applicationautoscaling';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { VpcOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Peer, Port, SecurityGroup, SubnetType, Vpc, type IPeer } from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import {
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargatePlatformVersion,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ListenerAction,
  ListenerCertificate,
  ListenerCondition,
  SslPolicy,
  type ApplicationTargetGroup,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { Config } from '../../functions/core/config.ts';
import { SERVICE_HEALTH_PATH } from '../../functions/service-main.ts';
import { modulesOfFunction, resourcesOf } from '../manifest/ports.ts';
import type { TaskQueues } from './task-queues.ts';
import type { AreaModule, Host, ServiceSpec } from '../manifest/types.ts';
import type { PlatformData } from './data-stores.ts';
import type { OAuthFunctionSettings } from './oauth-providers.ts';
import type { HostUrlName, PlatformEnvironment } from './platform-function.ts';
import { SERVICE_CONTAINER_PORT, stageServiceImage } from './service-image.ts';

/** The configuration variable naming each host's URL: the other functions and services read it. */
export const SERVICE_HOST_URL_VARIABLES: Readonly<Record<Exclude<Host, 'base' | 'mcp'>, HostUrlName>> = {
  voice: 'VOICE_URL',
  stream: 'STREAM_URL',
  cdn: 'CDN_URL',
  site: 'SITE_URL',
  code: 'CODE_URL',
};

/**
 * Seconds a connection may stay silent. CloudFront closes a WebSocket after 10 minutes without a
 * byte from the origin, whatever the load balancer allows, so the two match; services that hold
 * quiet connections longer must send pings.
 */
export const SERVICE_IDLE_TIMEOUT_SEC = 600;

/**
 * Seconds a task being replaced keeps its open connections (the target group's deregistration
 * delay): new connections already go to the new task, calls in progress finish on the old one.
 * ECS sends SIGTERM only after this.
 */
export const SERVICE_DRAIN_SEC = 300;

/** Seconds between SIGTERM and SIGKILL: Fargate's maximum, for the service's own `close()`. */
export const SERVICE_STOP_TIMEOUT_SEC = 120;

/** The managed prefix list of CloudFront's servers that reach origins (the same name in every region). */
const CLOUDFRONT_ORIGIN_FACING_PREFIX_LIST = 'com.amazonaws.global.cloudfront.origin-facing';

/** Variables a task receives for its area's ports, named as in `Config` so a rename breaks the build. */
const RUNTIME_FUNCTION_NAME: keyof Config = 'RUNTIME_FUNCTION_NAME';
const MCP_RUNTIME_FUNCTION_NAME: keyof Config = 'MCP_RUNTIME_FUNCTION_NAME';

export interface ServiceContainersProps {
  /** The service entry points to run, each with its area module (`servicesOf`); checked by `servicesByHost` first. */
  readonly services: readonly { readonly spec: ServiceSpec; readonly area: AreaModule }[];
  /** The queues a service may hand tasks to (its own area's, when it declares `tasks`). */
  readonly taskQueues: TaskQueues;
  /** Every area module: where the ports a service's area uses are provided. */
  readonly modules: readonly AreaModule[];
  /** The configuration every function reads; the tasks read it too. */
  readonly environment: PlatformEnvironment;
  /** Tables, buckets and keys: each task role is granted what its area declares (`resourcesOf`), nothing else. */
  readonly data: PlatformData;
  /** The runtime function user code runs in, for areas using the `compute` port. @default none */
  readonly runtime?: IFunction;
  /** The MCP runtime function, for areas using the `mcpRuntime` port. @default none */
  readonly mcpRuntime?: IFunction;
  /** OAuth settings and client secrets, for areas using the `secrets` port. @default none */
  readonly oauth?: OAuthFunctionSettings;
  /** Where the generated entries and image build contexts are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
  /**
   * A custom domain: each service's host at `<host>.<name>` (CloudFront, `certificateArn` in
   * us-east-1), and its load balancer reached over HTTPS as `<host>-origin.<name>`
   * (`regionalCertificateArn`). @default the distribution's own name, and HTTP inside the VPC origin
   */
  readonly domain?: ServiceDomain;
}

export interface ServiceDomain {
  readonly name: string;
  readonly certificateArn: string;
  readonly regionalCertificateArn: string;
}

/** The header CloudFront adds to every request to a service's origin; the load balancer forwards only requests carrying its secret value. */
export const ORIGIN_VERIFY_HEADER = 'X-Origin-Verify';

/** Everything that serves one service's host. */
export interface ServiceHost {
  readonly spec: ServiceSpec;
  readonly taskDefinition: FargateTaskDefinition;
  readonly service: FargateService;
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly targetGroup: ApplicationTargetGroup;
  readonly distribution: Distribution;
  /** The task's security group: only the load balancer may reach it. */
  readonly taskSecurityGroup: SecurityGroup;
  /** The load balancer's security group: only CloudFront may reach it. */
  readonly loadBalancerSecurityGroup: SecurityGroup;
  /** The value of ORIGIN_VERIFY_HEADER only this host's distribution sends (generated by Secrets Manager). */
  readonly originSecret: Secret;
  /** With a custom domain, the name the load balancer's certificate covers; point it (CNAME) at the load balancer. */
  readonly originName: string | undefined;
  /** The image's build context, written at synth (service-image.ts). */
  readonly imageDirectory: string;
  /** `wss://<distribution domain>` for the voice host, `https://...` for others; no trailing slash. */
  readonly url: string;
  readonly variable: HostUrlName;
}

/**
 * The services of the platform (the voice bridge): each one a Fargate service on arm64 behind an
 * Application Load Balancer (WebSockets pass through it), with a CloudFront distribution in front
 * for TLS on its default domain (wss://), nothing cached and every viewer header forwarded.
 *
 * Network: one VPC with public subnets for the tasks and isolated ones for the load balancers, and
 * no NAT gateway (its hourly cost would dwarf a small deployment's); tasks get public IPs to reach
 * AWS APIs and pull their image, and their security group admits only the load balancer. Each load
 * balancer is internal, reached by its distribution through a CloudFront VPC origin: the hop from
 * CloudFront stays on AWS's network, never the internet (and is HTTPS too with a custom domain,
 * whose certificate the load balancer can present). Its security group admits only CloudFront's
 * origin-facing servers, and its listener forwards only requests carrying the origin secret this
 * host's distribution adds, so another distribution pointed at the same origin gets 403.
 *
 * Each task role is granted exactly its area's declared resources, as a function would be; the
 * host's URL is given to every task and exposed for the functions (`hostUrls`).
 */
export class ServiceContainers extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly hosts: ReadonlyMap<Host, ServiceHost>;
  /** The URL variable of each served host (VOICE_URL, ...), for the functions' environment. */
  readonly hostUrls: Partial<Record<HostUrlName, string>>;

  constructor(scope: Construct, id: string, props: ServiceContainersProps) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      // Two zones: a load balancer needs subnets in at least two.
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [
        { name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        // Internal load balancers: a CloudFront VPC origin must be in a private subnet.
        { name: 'Origins', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    });
    this.cluster = new Cluster(this, 'Cluster', { vpc: this.vpc });
    const cloudFront = Peer.prefixList(this.cloudFrontPrefixListId());

    // The load balancers and distributions first: every task is told every service host's URL.
    const fronts = props.services.map(({ spec, area }) => {
      const scope = new Construct(this, `Service-${spec.id.replace(/[^A-Za-z0-9]/g, '-')}`);
      return { spec, area, scope, ...this.front(scope, spec, cloudFront, props.domain) };
    });
    this.hostUrls = Object.fromEntries(fronts.map((f) => [f.variable, f.url]));
    // Each task reads its own host's URL too: that depends on the distribution, which depends on the
    // load balancer only, so unlike a function reading its own function URL it makes no cycle.
    const environment = { ...props.environment, ...this.hostUrls };
    this.hosts = new Map(
      fronts.map(({ spec, area, scope, ...front }) => {
        const task = this.task(scope, spec, area, environment, props);
        const taskSecurityGroup = new SecurityGroup(scope, 'TaskSecurityGroup', {
          vpc: this.vpc,
          description: `Tasks of service ${spec.id}: reachable from its load balancer only`,
          // Out to AWS APIs, the image registry and model providers.
          allowAllOutbound: true,
        });
        const service = new FargateService(scope, 'Service', {
          cluster: this.cluster,
          taskDefinition: task.taskDefinition,
          desiredCount: spec.desiredCount,
          platformVersion: FargatePlatformVersion.LATEST,
          // Public subnets, no NAT: a public IP is the task's way out; its security group lets nothing in but the load balancer.
          assignPublicIp: true,
          vpcSubnets: { subnetType: SubnetType.PUBLIC },
          securityGroups: [taskSecurityGroup],
          // The new task serves before the old one drains; a task that never gets healthy rolls the deployment back.
          minHealthyPercent: 100,
          maxHealthyPercent: 200,
          circuitBreaker: { enable: true, rollback: true },
          healthCheckGracePeriod: Duration.seconds(60),
        });
        const listener =
          props.domain === undefined
            ? front.loadBalancer.addListener('Http', { port: 80, protocol: ApplicationProtocol.HTTP, open: false })
            : front.loadBalancer.addListener('Https', {
                port: 443,
                protocol: ApplicationProtocol.HTTPS,
                open: false,
                certificates: [ListenerCertificate.fromArn(props.domain.regionalCertificateArn)],
                sslPolicy: SslPolicy.RECOMMENDED_TLS,
              });
        // Anything without this host's origin secret: a request that did not come through its distribution.
        listener.addAction('Refuse', { action: ListenerAction.fixedResponse(403, { contentType: 'text/plain', messageBody: 'Forbidden' }) });
        // Registering the service opens the task's security group to the load balancer's, on the container port only.
        const targetGroup = listener.addTargets('Service', {
          priority: 1,
          conditions: [ListenerCondition.httpHeader(ORIGIN_VERIFY_HEADER, [front.originSecret.secretValue.unsafeUnwrap()])],
          port: SERVICE_CONTAINER_PORT,
          protocol: ApplicationProtocol.HTTP,
          targets: [service.loadBalancerTarget({ containerName: task.containerName, containerPort: SERVICE_CONTAINER_PORT })],
          deregistrationDelay: Duration.seconds(SERVICE_DRAIN_SEC),
          healthCheck: { path: SERVICE_HEALTH_PATH, interval: Duration.seconds(15), timeout: Duration.seconds(5), healthyThresholdCount: 2 },
        });
        if (spec.scaling !== undefined) this.scaleOnConnections(service, front.loadBalancer, targetGroup, spec);
        if (spec.peers === true) {
          taskSecurityGroup.addIngressRule(taskSecurityGroup, Port.tcp(SERVICE_CONTAINER_PORT), `Tasks of service ${spec.id} pass connections to each other`);
        }
        const host: ServiceHost = {
          spec,
          service,
          targetGroup,
          taskSecurityGroup,
          ...front,
          taskDefinition: task.taskDefinition,
          imageDirectory: task.imageDirectory,
        };
        return [spec.host, host];
      }),
    );
  }

  /**
   * Target tracking on connections per healthy task: a call holds its WebSocket for minutes, so
   * requests per target (the load balancer's own metric) says nothing about load. The metric counts
   * both legs of each connection (client to load balancer, load balancer to task), so the target is
   * twice the calls a task should carry.
   */
  private scaleOnConnections(service: FargateService, loadBalancer: ApplicationLoadBalancer, targetGroup: ApplicationTargetGroup, spec: ServiceSpec): void {
    const { maxCount, connectionsPerTask } = spec.scaling!;
    if (!Number.isInteger(maxCount) || maxCount < spec.desiredCount)
      throw new Error(`Service ${spec.id}: scaling.maxCount must be a whole number of at least desiredCount.`);
    const target = new ScalableTarget(service, 'TaskCount', {
      serviceNamespace: ServiceNamespace.ECS,
      resourceId: `service/${this.cluster.clusterName}/${service.serviceName}`,
      scalableDimension: 'ecs:service:DesiredCount',
      minCapacity: spec.desiredCount,
      maxCapacity: maxCount,
    });
    const balancer = { name: 'LoadBalancer', value: loadBalancer.loadBalancerFullName };
    // The L2 policy takes no metric math for target tracking; CloudFormation does (metric data queries).
    new CfnScalingPolicy(service, 'ConnectionsPerTask', {
      policyName: `${spec.id}-connections-per-task`,
      policyType: 'TargetTrackingScaling',
      scalingTargetId: target.scalableTargetId,
      targetTrackingScalingPolicyConfiguration: {
        targetValue: 2 * connectionsPerTask,
        // Slow in: a task scaled in drains its calls, but starting one takes a minute or more.
        scaleInCooldown: 600,
        scaleOutCooldown: 120,
        customizedMetricSpecification: {
          metrics: [
            {
              id: 'connections',
              metricStat: { metric: { namespace: 'AWS/ApplicationELB', metricName: 'ActiveConnectionCount', dimensions: [balancer] }, stat: 'Sum' },
              returnData: false,
            },
            {
              id: 'tasks',
              metricStat: {
                metric: {
                  namespace: 'AWS/ApplicationELB',
                  metricName: 'HealthyHostCount',
                  dimensions: [{ name: 'TargetGroup', value: targetGroup.targetGroupFullName }, balancer],
                },
                stat: 'Average',
              },
              returnData: false,
            },
            { id: 'perTask', expression: 'IF(tasks > 0, connections / tasks, connections)', label: 'Active connections per healthy task', returnData: true },
          ],
        },
      },
    });
  }

  /** The load balancer and distribution of one service, and the URL they give its host. */
  private front(scope: Construct, spec: ServiceSpec, cloudFront: IPeer, domain: ServiceDomain | undefined) {
    const variable = spec.host === 'base' || spec.host === 'mcp' ? undefined : SERVICE_HOST_URL_VARIABLES[spec.host];
    if (variable === undefined) throw new Error(`Service ${spec.id} cannot serve the ${spec.host} host: it is the API's.`);
    const loadBalancerSecurityGroup = new SecurityGroup(scope, 'LoadBalancerSecurityGroup', {
      vpc: this.vpc,
      description: `Load balancer of service ${spec.id}: reachable from CloudFront only`,
      allowAllOutbound: false,
    });
    const originPort = domain === undefined ? 80 : 443;
    loadBalancerSecurityGroup.addIngressRule(cloudFront, Port.tcp(originPort), "CloudFront's origin-facing servers (its VPC origin)");
    const loadBalancer = new ApplicationLoadBalancer(scope, 'LoadBalancer', {
      vpc: this.vpc,
      // Internal: CloudFront reaches it through its VPC origin; nothing on the internet can.
      internetFacing: false,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroup: loadBalancerSecurityGroup,
      idleTimeout: Duration.seconds(SERVICE_IDLE_TIMEOUT_SEC),
      dropInvalidHeaderFields: true,
    });
    const originSecret = new Secret(scope, 'OriginSecret', {
      description: `Agent platform: the ${ORIGIN_VERIFY_HEADER} header CloudFront sends to the ${spec.host} host's load balancer`,
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
    });
    const originName = domain === undefined ? undefined : `${spec.host}-origin.${domain.name}`;
    const distribution = new Distribution(scope, 'Distribution', {
      comment: `Platform ${spec.host} host (service ${spec.id})`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      ...(domain === undefined
        ? {}
        : { domainNames: [`${spec.host}.${domain.name}`], certificate: Certificate.fromCertificateArn(scope, 'Certificate', domain.certificateArn) }),
      defaultBehavior: {
        // A VPC origin: the load balancer is internal. Without a custom domain its name can have no
        // certificate, so the hop is HTTP, inside AWS's network; with one it is HTTPS to originName.
        origin: VpcOrigin.withApplicationLoadBalancer(loadBalancer, {
          protocolPolicy: domain === undefined ? OriginProtocolPolicy.HTTP_ONLY : OriginProtocolPolicy.HTTPS_ONLY,
          ...(originName === undefined ? {} : { domainName: originName, originSslProtocols: [OriginSslPolicy.TLS_V1_2] }),
          customHeaders: { [ORIGIN_VERIFY_HEADER]: originSecret.secretValue.unsafeUnwrap() },
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        // Every request is the service's to answer, and a WebSocket handshake needs its headers
        // (Sec-WebSocket-Key, -Version) forwarded: CloudFront's documented setting for WebSockets.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER,
        compress: false,
      },
    });
    const scheme = spec.host === 'voice' ? 'wss' : 'https';
    const name = domain === undefined ? distribution.distributionDomainName : `${spec.host}.${domain.name}`;
    return { loadBalancer, loadBalancerSecurityGroup, distribution, variable, originSecret, originName, url: `${scheme}://${name}` };
  }

  /** The task definition of one service: its image, size, logs, stop timeout and its area's grants. */
  private task(scope: Construct, spec: ServiceSpec, area: AreaModule, environment: PlatformEnvironment, props: ServiceContainersProps) {
    const taskDefinition = new FargateTaskDefinition(scope, 'Task', {
      cpu: spec.cpu,
      memoryLimitMiB: validateServiceSize(spec),
      // Graviton, like the functions; the image builds for it anywhere (service-image.ts).
      runtimePlatform: { cpuArchitecture: CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    // Exactly the area's declared ports, as its functions get them; a service has no routes, so no kernel.
    const resources = resourcesOf([area], [], props.modules);
    const role = taskDefinition.taskRole;
    props.data.grant(role, resources);
    const ports: Record<string, string> = { ...props.taskQueues.grantSend(role, resources.queueAreas) };
    if (resources.runtimes.has('python') && props.runtime !== undefined) {
      props.runtime.grantInvoke(role);
      ports[RUNTIME_FUNCTION_NAME] = props.runtime.functionName;
    }
    if (resources.runtimes.has('mcp') && props.mcpRuntime !== undefined) {
      props.mcpRuntime.grantInvoke(role);
      ports[MCP_RUNTIME_FUNCTION_NAME] = props.mcpRuntime.functionName;
    }
    if (resources.oauthClients && props.oauth !== undefined) {
      Object.assign(ports, definedOnly(props.oauth.environment));
      if (props.oauth.clientSecretArns.length > 0)
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [...props.oauth.clientSecretArns] }));
    }

    const imageDirectory = stageServiceImage(spec, modulesOfFunction([area], props.modules), props.entriesDir);
    const containerName = 'service';
    taskDefinition.addContainer(containerName, {
      image: ContainerImage.fromAsset(imageDirectory, { platform: Platform.LINUX_ARM64 }),
      portMappings: [{ containerPort: SERVICE_CONTAINER_PORT }],
      environment: { ...definedOnly(environment), ...ports, AWS_REGION: Stack.of(this).region, PORT: String(SERVICE_CONTAINER_PORT) },
      logging: LogDrivers.awsLogs({ streamPrefix: spec.handler, logGroup: new LogGroup(scope, 'Logs', { retention: RetentionDays.ONE_MONTH }) }),
      stopTimeout: Duration.seconds(SERVICE_STOP_TIMEOUT_SEC),
      // The bundle writes nothing; a read-only root leaves an intruder nowhere to put a tool.
      readonlyRootFilesystem: true,
    });
    return { taskDefinition, containerName, imageDirectory };
  }

  /**
   * The id of CloudFront's origin-facing prefix list in the stack's region, looked up at deploy
   * (a synth-time lookup would need AWS credentials, which synth must not).
   */
  private cloudFrontPrefixListId(): string {
    const lookup = new AwsCustomResource(this, 'CloudFrontPrefixList', {
      onUpdate: {
        service: 'EC2',
        action: 'DescribeManagedPrefixLists',
        parameters: { Filters: [{ Name: 'prefix-list-name', Values: [CLOUDFRONT_ORIGIN_FACING_PREFIX_LIST] }] },
        physicalResourceId: PhysicalResourceId.of(CLOUDFRONT_ORIGIN_FACING_PREFIX_LIST),
        outputPaths: ['PrefixLists.0.PrefixListId'],
      },
      // Describe calls take no resource-level permissions.
      policy: AwsCustomResourcePolicy.fromSdkCalls({ resources: AwsCustomResourcePolicy.ANY_RESOURCE }),
      installLatestAwsSdk: false,
    });
    return lookup.getResponseField('PrefixLists.0.PrefixListId');
  }
}

/** Fargate's CPU and memory pairs (Linux): each CPU size allows a range of memory in 1 GB steps (256 CPU: 0.5, 1 or 2 GB). */
const FARGATE_MEMORY_MB: Readonly<Record<number, readonly [number, number]>> = {
  256: [512, 2048],
  512: [1024, 4096],
  1024: [2048, 8192],
  2048: [4096, 16384],
  4096: [8192, 30720],
};

/** The memory of `spec`, checked at synth against Fargate's sizes (and its task count) so a bad value fails here, not in a deployment. */
export function validateServiceSize(spec: ServiceSpec): number {
  const range = FARGATE_MEMORY_MB[spec.cpu];
  const fits = range !== undefined && spec.memoryMb >= range[0] && spec.memoryMb <= range[1] && (spec.memoryMb === 512 || spec.memoryMb % 1024 === 0);
  if (!fits)
    throw new Error(
      `Service ${spec.id}: ${spec.cpu} CPU units with ${spec.memoryMb} MB is not a Fargate size; ` +
        `use cpu ${Object.keys(FARGATE_MEMORY_MB).join(', ')} with memory in 1024 MB steps in its range (256 CPU also takes 512 MB).`,
    );
  if (!Number.isInteger(spec.desiredCount) || spec.desiredCount < 1) throw new Error(`Service ${spec.id}: desiredCount must be a whole number of at least 1.`);
  return spec.memoryMb;
}

function definedOnly(environment: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
