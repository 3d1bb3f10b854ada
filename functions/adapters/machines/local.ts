import { ServiceUnavailableError } from '../../core/errors.ts';
import type { Machines } from '../../code-server/machines.ts';

export const CODE_SERVER_UNAVAILABLE = 'CODE_SERVER_UNAVAILABLE';

/** What the operator configures for code servers to run (the message of every 503). */
export const CODE_SERVER_UNAVAILABLE_MESSAGE =
  'Code servers are not available here: set CODE_SERVER_BACKEND=ec2 with AWS_REGION and AWS credentials, and AWS_ENDPOINT_URL_EC2 and AWS_ENDPOINT_URL_SSM for an EC2/SSM-compatible endpoint such as the moto server (see the README).';

/**
 * No machine backend (the local platform without CODE_SERVER_BACKEND=ec2): there is no local
 * stand-in for a VM, so every call is a 503 that says what to configure.
 */
export function createUnavailableMachines(): Machines {
  const refuse = (): never => {
    throw new ServiceUnavailableError(CODE_SERVER_UNAVAILABLE_MESSAGE, CODE_SERVER_UNAVAILABLE);
  };
  return { backend: 'none', launch: refuse, describe: refuse, start: refuse, stop: refuse, terminate: refuse, runSetup: refuse, setupState: refuse };
}
