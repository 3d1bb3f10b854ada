/**
 * The cloud adapter of the site cache against moto's CloudFront with the real AWS SDK: an
 * invalidation is one CreateInvalidation on the site distribution, with exactly the scoped paths
 * and the caller reference, answered with CloudFront's id and initial status.
 */
import { CloudFrontClient, CreateDistributionCommand, GetInvalidationCommand } from '@aws-sdk/client-cloudfront';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudFrontSiteCache } from '../../functions/websites/site-cache.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the CloudFront site cache test is skipped (python3 -m pip install "moto[server]")');

describe.skipIf(!hasMoto)('CloudFront site cache against moto with the real AWS SDK', () => {
  let moto: MotoServer;
  let cloudFront: CloudFrontClient;
  let distributionId: string;

  beforeAll(async () => {
    moto = await startMoto();
    cloudFront = new CloudFrontClient(motoClientConfig(moto.endpoint));
    const created = await cloudFront.send(
      new CreateDistributionCommand({
        DistributionConfig: {
          CallerReference: 'site-host',
          Comment: 'site host',
          Enabled: true,
          Origins: {
            Quantity: 1,
            Items: [
              {
                Id: 'site',
                DomainName: 'abc.lambda-url.us-east-1.on.aws',
                CustomOriginConfig: { HTTPPort: 80, HTTPSPort: 443, OriginProtocolPolicy: 'https-only' },
              },
            ],
          },
          DefaultCacheBehavior: { TargetOriginId: 'site', ViewerProtocolPolicy: 'redirect-to-https', CachePolicyId: '658327ea-f89d-4fab-a63d-7e88639e58f6' },
        },
      }),
    );
    distributionId = created.Distribution!.Id!;
  }, 60_000);
  afterAll(async () => {
    cloudFront?.destroy();
    await moto?.stop();
  });

  it('creates one invalidation of exactly the given paths, with the caller reference, and answers its id and status', async () => {
    // Prepare
    const { endpoint, region, credentials } = motoClientConfig(moto.endpoint);
    const cache = createCloudFrontSiteCache({ distributionId, region, endpoint, credentials });
    const paths = ['/alice/*', '/alice/about/index.html'];

    // Act
    const answer = await cache.invalidate(paths, 'user-1-request-1');
    const stored = await cloudFront.send(new GetInvalidationCommand({ DistributionId: distributionId, Id: answer.invalidationId }));

    // Assess
    expect(answer.invalidationId).toEqual(expect.any(String));
    expect(['InProgress', 'COMPLETED', 'Completed']).toContain(answer.status);
    expect(stored.Invalidation?.InvalidationBatch?.Paths?.Items).toEqual(paths);
    expect(stored.Invalidation?.InvalidationBatch?.CallerReference).toBe('user-1-request-1');
  });

  it('reports an unknown distribution as a failure, so the service gives the count and credits back', async () => {
    // Prepare
    const { endpoint, region, credentials } = motoClientConfig(moto.endpoint);
    const cache = createCloudFrontSiteCache({ distributionId: 'E0000000000000', region, endpoint, credentials });

    // Act
    const outcome = cache.invalidate(['/alice/*'], 'user-1-request-2');

    // Assess
    await expect(outcome).rejects.toThrow();
  });
});
