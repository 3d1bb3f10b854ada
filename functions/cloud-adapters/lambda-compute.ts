import { LambdaClient } from '@aws-sdk/client-lambda';
import { ConfigError, type Config } from '../core/config.ts';
import type { Compute } from '../runtimes/compute.ts';
import { createLambdaCompute } from '../runtimes/lambda-compute.ts';

/** The `compute` port in the cloud: the runtime Lambda, named by RUNTIME_FUNCTION_NAME (only functions granted it receive it). */
export function lambdaCompute(config: Config): Compute {
  if (!config.RUNTIME_FUNCTION_NAME) throw new ConfigError('Invalid platform configuration: RUNTIME_FUNCTION_NAME: is required in the cloud');
  return createLambdaCompute({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.RUNTIME_FUNCTION_NAME });
}
