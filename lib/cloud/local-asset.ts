import { AssetHashType } from 'aws-cdk-lib';
import { Code, type Runtime } from 'aws-cdk-lib/aws-lambda';

/**
 * Lambda code staged by a local step (a copy of files, no install, no network) instead of Docker.
 * The hash is taken from what is staged, so a change to any shipped file deploys. It is a bundling
 * step rather than a plain copied asset so that synths with bundling off (the infra tests) stage
 * nothing. `runtime`'s image is only named because CDK requires one: the local step always succeeds.
 */
export function locallyStagedCode(sourceDir: string, runtime: Runtime, stage: (outputDir: string) => void): Code {
  return Code.fromAsset(sourceDir, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: runtime.bundlingImage,
      local: {
        tryBundle(outputDir: string): boolean {
          stage(outputDir);
          return true;
        },
      },
    },
  });
}
