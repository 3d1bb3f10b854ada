/**
 * The machines a code server runs on (SPEC 4.12): EC2 instances driven through EC2 and SSM in the
 * cloud and, with CODE_SERVER_BACKEND=ec2, locally against any EC2/SSM-compatible endpoint
 * (functions/adapters/machines/aws.ts); nothing otherwise (functions/adapters/machines/local.ts).
 * Types only, so every bundle may import it without the SDK.
 */

/** EC2's instance states, as DescribeInstances names them. */
export type MachineState = 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';

export interface MachineLaunch {
  readonly instanceType: string;
  /** The IDE's password, written where the instance's code-server reads it at first boot. */
  readonly password: string;
  /** Tags, so an operator can tell whose instance it is (never a secret). */
  readonly ownerId: string;
  readonly alias: string | null;
}

export interface Machine {
  readonly instanceId: string;
  readonly state: MachineState;
  /** Where the browser reaches the IDE over HTTPS (`https://...`): null until the instance has an address. */
  readonly url: string | null;
}

export interface SetupRun {
  readonly script: string;
  /** Given to the script's shell only: never in the command's text, its output or a log. */
  readonly environment: Readonly<Record<string, string>>;
}

export type SetupState = { readonly state: 'running' } | { readonly state: 'completed' } | { readonly state: 'failed'; readonly error: string };

export interface Machines {
  /** `none` when no backend is configured: every call but the catalogue answers 503. */
  readonly backend: 'ec2' | 'none';
  launch(launch: MachineLaunch): Promise<{ readonly instanceId: string }>;
  /** Null when the instance is gone (terminated long ago, or never existed). */
  describe(instanceId: string): Promise<Machine | null>;
  start(instanceId: string): Promise<void>;
  stop(instanceId: string): Promise<void>;
  terminate(instanceId: string): Promise<void>;
  /** Runs `run.script` as the instance's user, its environment handed over out of band. */
  runSetup(instanceId: string, run: SetupRun): Promise<{ readonly commandId: string }>;
  /** Where a setup run is; a finished one's out-of-band environment is removed. */
  setupState(instanceId: string, commandId: string): Promise<SetupState>;
}
