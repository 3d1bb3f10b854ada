import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
  type IOrigin,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { assetPaths, buildAssetSync } from '../assets/build-asset.ts';
import type { Host, StaticAssetSpec } from '../manifest/types.ts';

export interface AssetDistributionProps {
  readonly host: Host;
  /** The assets published on this host (the embed widget). */
  readonly assets: readonly StaticAssetSpec[];
  /** A custom name for the host, and its certificate (ACM, us-east-1). @default the distribution's `*.cloudfront.net` name */
  readonly domain?: { readonly name: string; readonly certificateArn: string };
}

/**
 * A host of browser assets (the CDN host: the embed widget): the files built at synth (esbuild,
 * as locally) in a private bucket, which only this CloudFront distribution reads (origin access
 * control). `/{name}` is revalidated so sites pick up a new widget; `/v{version}/{name}` is
 * immutable and kept when the next version is deployed, so pages pinned to it keep working.
 */
export class AssetDistribution extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** The bucket as this distribution reads it, for more behaviors on the same files (the console). */
  readonly origin: IOrigin;
  /** `https://<id>.cloudfront.net`: the host's URL (CDN_URL). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: AssetDistributionProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // Only built files: the next deployment writes them again.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
    });
    this.origin = S3BucketOrigin.withOriginAccessControl(this.bucket);
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Platform ${props.host} host: the embed widget`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      ...(props.domain === undefined
        ? {}
        : { domainNames: [props.domain.name], certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn) }),
      defaultBehavior: {
        origin: this.origin,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachedMethods: CachedMethods.CACHE_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        // Any site may load the script.
        responseHeadersPolicy: ResponseHeadersPolicy.CORS_ALLOW_ALL_ORIGINS,
        compress: true,
      },
    });
    const built = props.assets.map((asset) => ({ paths: assetPaths(asset), code: buildAssetSync(asset) }));
    const contentType = 'application/javascript; charset=utf-8';
    new BucketDeployment(this, 'Current', {
      destinationBucket: this.bucket,
      sources: built.map(({ paths, code }) => Source.data(paths.current.slice(1), code)),
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.minutes(5)), CacheControl.mustRevalidate()],
      contentType,
      prune: false,
      distribution: this.distribution,
      distributionPaths: built.map(({ paths }) => paths.current),
    });
    new BucketDeployment(this, 'Versioned', {
      destinationBucket: this.bucket,
      sources: built.map(({ paths, code }) => Source.data(paths.versioned.slice(1), code)),
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
      contentType,
      prune: false,
    });
    this.url = `https://${props.domain?.name ?? this.distribution.distributionDomainName}`;
  }
}
