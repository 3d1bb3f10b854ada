import {
  AllowedMethods,
  CachedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { SITE_VIEWER_REQUEST_SOURCE } from './site-viewer-request.ts';

export interface SiteDistributionProps {
  /** The site function's URL (AWS_IAM auth): the distribution is its only caller, signing with origin access control. */
  readonly functionUrl: IFunctionUrl;
}

/**
 * The site host: a CloudFront distribution in front of the site function's URL. Caching is on and
 * follows the function's Cache-Control (a minute in browsers, a year at the edge until the owner's
 * POST /website/invalidate); a viewer-request function gives folder addresses their `index.html`
 * key. The origin is the function, not the bucket: objects are keyed by owner id while addresses
 * use aliases, which can change, and each site's own 404 page needs code at the origin
 * (docs/ARCHITECTURE.md, Websites). The bucket stays private; only the function reads it.
 */
export class SiteDistribution extends Construct {
  readonly distribution: Distribution;
  /** `https://<id>.cloudfront.net`: SITE_URL. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: SiteDistributionProps) {
    super(scope, id);
    const indexRewrite = new CloudFrontFunction(this, 'IndexRewrite', {
      code: FunctionCode.fromInline(SITE_VIEWER_REQUEST_SOURCE),
      runtime: FunctionRuntime.JS_2_0,
      comment: 'Folder addresses of users sites to their index.html',
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: "Platform site host: users' sites",
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: FunctionUrlOrigin.withOriginAccessControl(props.functionUrl),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        // Sites are read only; origin access control signs GET and HEAD without a body hash.
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachedMethods: CachedMethods.CACHE_GET_HEAD,
        // Honours the origin's Cache-Control (s-maxage); query strings and cookies stay out of the key.
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        compress: true,
        functionAssociations: [{ function: indexRewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
    });
    this.url = `https://${this.distribution.distributionDomainName}`;
  }
}
