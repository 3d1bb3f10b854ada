import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { buildConsoleSync, CONSOLE_CSP, CONSOLE_PATH } from '../console/build-console.ts';
import type { ConsoleConfig } from '../console/console-config.ts';
import type { AssetDistribution } from './asset-distribution.ts';
import { SITE_VIEWER_REQUEST_SOURCE } from './site-viewer-request.ts';

export interface ConsoleDeploymentProps {
  /** The CDN host, whose bucket and distribution serve the console under `/console/`. */
  readonly assets: AssetDistribution;
  /** The API's base URL (a deploy-time value). */
  readonly apiUrl: string;
  /** The user pool's app client, for e-mail and password sign-in (USER_PASSWORD_AUTH). */
  readonly userPoolClientId: string;
}

/**
 * The web console in the cloud: built at synth (esbuild, as locally) into the CDN host's bucket
 * under `console/`, served by its distribution with the console's security headers, and told
 * where the API is and how to sign in by a `config.json` written at deployment (the API URL and the
 * app client id are only known then). Hashed files are immutable; the page and its config are
 * revalidated, so a deployment shows at the next load.
 */
export class ConsoleDeployment extends Construct {
  /** `https://<cdn host>/console/` */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ConsoleDeploymentProps) {
    super(scope, id);
    const prefix = CONSOLE_PATH.slice(1);
    const files = buildConsoleSync();
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'The web console: its own scripts only, never framed',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONSOLE_CSP, override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        contentTypeOptions: { override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
      },
    });
    // `/console/` is asked for as its `index.html`, as a site's folder is.
    const indexRewrite = new CloudFrontFunction(this, 'IndexRewrite', { code: FunctionCode.fromInline(SITE_VIEWER_REQUEST_SOURCE) });
    props.assets.distribution.addBehavior(`${CONSOLE_PATH}/*`, props.assets.origin, {
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      compress: true,
      functionAssociations: [{ function: indexRewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
    });
    // One asset for the hashed files (rather than one per file): staged in a directory of their own.
    const staged = mkdtempSync(join(tmpdir(), 'console-files-'));
    for (const file of files.filter((f) => f.immutable)) writeFileSync(join(staged, file.path), file.body);
    new BucketDeployment(this, 'Files', {
      destinationBucket: props.assets.bucket,
      destinationKeyPrefix: `${prefix}/`,
      sources: [Source.asset(staged)],
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
      // Older hashed files stay: a page loaded before the deployment still finds its chunks.
      prune: false,
    });
    const config: ConsoleConfig = {
      apiUrl: props.apiUrl,
      signIn: { kind: 'cognito', region: Stack.of(this).region, userPoolClientId: props.userPoolClientId },
    };
    const index = files.find((f) => f.path === 'index.html')!;
    new BucketDeployment(this, 'Page', {
      destinationBucket: props.assets.bucket,
      sources: [Source.data(`${prefix}/index.html`, index.body), Source.jsonData(`${prefix}/config.json`, config)],
      cacheControl: [CacheControl.noCache()],
      prune: false,
      distribution: props.assets.distribution,
      distributionPaths: [`${CONSOLE_PATH}/`, `${CONSOLE_PATH}/index.html`, `${CONSOLE_PATH}/config.json`],
    });
    this.url = `${props.assets.url}${CONSOLE_PATH}/`;
  }
}
