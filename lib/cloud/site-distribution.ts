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
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { SITE_VIEWER_REQUEST_SOURCE, siteViewerRequestSource } from './site-viewer-request.ts';

/**
 * The name users' sites live under, each at `https://{alias}.{name}` (an origin per site): the
 * `siteDomain` and `siteCertificateArn` deploy options. The operator owns the DNS: `name` and
 * `*.name` point at the distribution (the `SiteDnsTarget` output).
 */
export interface SiteDomain {
  /** e.g. `sites.example.com`. */
  readonly name: string;
  /** An ACM certificate in us-east-1 (CloudFront's region) for `name` and `*.name`. */
  readonly certificateArn: string;
}

export interface SiteDistributionProps {
  /** The site function's URL (AWS_IAM auth): the distribution is its only caller, signing with origin access control. */
  readonly functionUrl: IFunctionUrl;
  /** @default none: every site is a path of the distribution's own name, one origin shared by all (docs/ARCHITECTURE.md, Websites) */
  readonly domain?: SiteDomain;
}

/**
 * The site host: a CloudFront distribution in front of the site function's URL. Caching is on and
 * follows the function's Cache-Control (a minute in browsers, a year at the edge until the owner's
 * POST /website/invalidate); a viewer-request function gives folder addresses their `index.html`
 * key and, with a site domain, each site a name and origin of its own. The origin is the function,
 * not the bucket: objects are keyed by owner id while addresses use aliases, which can change, and
 * each site's own 404 page needs code at the origin (docs/ARCHITECTURE.md, Websites). The bucket
 * stays private; only the function reads it.
 */
export class SiteDistribution extends Construct {
  readonly distribution: Distribution;
  /** SITE_URL: `https://{domain}` with a site domain, else `https://<id>.cloudfront.net`. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: SiteDistributionProps) {
    super(scope, id);
    const domain = props.domain;
    const indexRewrite = new CloudFrontFunction(this, 'IndexRewrite', {
      code: FunctionCode.fromInline(domain === undefined ? SITE_VIEWER_REQUEST_SOURCE : siteViewerRequestSource(domain.name)),
      runtime: FunctionRuntime.JS_2_0,
      comment: domain === undefined ? 'Folder addresses of users sites to their index.html' : 'Each site on its own name; folder addresses to their index.html',
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: "Platform site host: users' sites",
      httpVersion: HttpVersion.HTTP2_AND_3,
      ...(domain === undefined
        ? {}
        : {
            domainNames: [domain.name, `*.${domain.name}`],
            certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
          }),
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
    this.url = domain === undefined ? `https://${this.distribution.distributionDomainName}` : `https://${domain.name}`;
  }
}
