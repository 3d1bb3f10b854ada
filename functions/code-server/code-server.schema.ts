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

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const statusSchema = z.enum(['none', 'launching', 'running', 'stopped', 'terminated']);
const setupStatusSchema = z.enum(['running', 'completed', 'failed']);
const instanceTypeSchema = z.enum(INSTANCE_TYPES.map((t) => t.instanceType) as [InstanceTypeName, ...InstanceTypeName[]]);
const isoOrNull = z.string().nullable().describe('ISO 8601');

/** Which keys setup would inject, as prefixes only: never a secret value. */
const credentialsSchema = z.object({
  hasGithubPat: z.boolean(),
  githubPatPrefix: z.string().nullable().describe("The stored GitHub token's first characters"),
  hasAwsKeys: z.boolean(),
  awsAccessKeyPrefix: z.string().nullable().describe("The stored AWS access key id's first characters"),
});

/** SPEC part 2, "Code server instance"; before the first launch only status, alias, setupScript, the minutes and credentials. */
export const codeServerResponse = z.object({
  status: statusSchema,
  instanceId: z.string().nullable().optional(),
  alias: z.string().nullable().describe("The owner's alias"),
  instanceType: instanceTypeSchema.optional(),
  creditsPerMinute: z.number().optional(),
  costPerMinute: z.number().optional().describe('USD per minute'),
  totalMinutesUsed: z.number(),
  currentMonthMinutes: z.number(),
  launchedAt: isoOrNull.optional().describe('ISO 8601; updated on each start'),
  stoppedAt: isoOrNull.optional(),
  url: z.string().optional().describe("The IDE's address; only while running"),
  password: z.string().optional().describe("The IDE's password; only while running"),
  setupScript: z.string().nullable(),
  setupStatus: setupStatusSchema.optional(),
  setupError: z.string().optional().describe("The failed script's error output, with the user's key values masked"),
  credentials: credentialsSchema,
});

export const instanceTypesResponse = z.object({
  instanceTypes: z.array(
    z.object({ instanceType: instanceTypeSchema, creditsPerMinute: z.number(), ram: z.string(), vcpus: z.number().int(), description: z.string() }),
  ),
  default: instanceTypeSchema,
});

export const launchedResponse = z.object({
  status: statusSchema,
  instanceId: z.string(),
  instanceType: instanceTypeSchema,
  creditsPerMinute: z.number(),
  alias: z.string().nullable(),
  message: z.string(),
});

export const startedResponse = z.object({ status: z.literal('launching'), instanceId: z.string(), message: z.string() });
export const stoppedResponse = z.object({ status: z.literal('stopped'), instanceId: z.string(), message: z.string() });
export const terminatedResponse = z.object({ status: z.literal('terminated'), message: z.string() });
export const setupStartedResponse = z.object({
  setupStatus: z.literal('running'),
  message: z.string(),
  commandId: z.string().describe('The setup run; its outcome shows as setupStatus in GET /code-server/status'),
});
export const setupScriptSavedResponse = z.object({ message: z.string(), setupScript: z.string() });
export const billingTickResponse = z.object({
  charged: z.number().int().describe('Instances charged for the period'),
  stopped: z.number().int().describe('Instances stopped because the balance could not pay the next period'),
  credits: z.number().describe('Credits charged in all'),
});
