import * as z from 'zod';
import type { SealedSecret } from '../core/secret-box.ts';

/** SPEC part 8: a setup script holds at most 8,000 characters. */
export const SETUP_SCRIPT_MAX = 8000;

const setupScript = z.string().max(SETUP_SCRIPT_MAX, `must be at most ${SETUP_SCRIPT_MAX} characters`);

/** The type is checked by the service, so an unknown one answers INVALID_INSTANCE_TYPE (SPEC part 7) rather than a schema error. */
export const launchBody = z.object({ instanceType: z.string().max(64).optional(), setupScript: setupScript.optional() }).strict();
export const setupBody = z.object({ setupScript: setupScript.optional() }).strict();
export const saveSetupScriptBody = z.object({ setupScript: setupScript.min(1, 'is required') }).strict();
export const emptyBody = z.object({}).strict().optional();

export type LaunchInput = z.infer<typeof launchBody>;

/** SPEC part 2's instance types and rates: the one table of them. */
export const INSTANCE_TYPES = [
  { instanceType: 't3.small', creditsPerMinute: 2, ram: '2 GB', vcpus: 2, description: 'Small: editing and light builds' },
  { instanceType: 't3.medium', creditsPerMinute: 3, ram: '4 GB', vcpus: 2, description: 'Medium: most projects' },
  { instanceType: 't3.large', creditsPerMinute: 5, ram: '8 GB', vcpus: 2, description: 'Large: bigger builds and test suites' },
  { instanceType: 't3.xlarge', creditsPerMinute: 10, ram: '16 GB', vcpus: 4, description: 'Extra large: heavy workloads' },
] as const;
export type InstanceTypeName = (typeof INSTANCE_TYPES)[number]['instanceType'];
export const DEFAULT_INSTANCE_TYPE: InstanceTypeName = 't3.small';

export type CodeServerStatus = 'none' | 'launching' | 'running' | 'stopped' | 'terminated';
export type SetupStatus = 'running' | 'completed' | 'failed';

/** One user's code server (table `code-servers`, one item per user). */
export interface CodeServerRecord {
  readonly userId: string;
  readonly status: CodeServerStatus;
  readonly instanceId: string | null;
  readonly instanceType: InstanceTypeName;
  readonly alias: string | null;
  /** The launch's IDE password, sealed with the secret box (context: owner and instance). */
  readonly password: SealedSecret | null;
  readonly url: string | null;
  readonly launchedAt: number | null;
  readonly stoppedAt: number | null;
  readonly setupScript: string | null;
  readonly setupStatus: SetupStatus | null;
  readonly setupError: string | null;
  readonly setupCommandId: string | null;
  /** Running time up to here is charged: each charge moves it forward, so a period is charged once. */
  readonly billedThrough: number | null;
  readonly totalMinutesUsed: number;
  /** Minutes charged in `month` (UTC `YYYY-MM`). */
  readonly monthMinutes: number;
  readonly month: string | null;
  /** `active` while running time accrues (launching, running): the sparse `byBilling` index the tick reads. */
  readonly billing?: 'active';
  /** Bumped by every write: each write is conditional on the one read. */
  readonly version: number;
  readonly updatedAt: number;
}
