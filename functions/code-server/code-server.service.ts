import { randomBytes, randomUUID } from 'node:crypto';
import { requireUser, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { CREDIT_PRICE_USD, CreditsRefusedError, roundCredits, type Credits } from '../core/credits.ts';
import { AccessDeniedError, ConflictError, InsufficientCreditsError, NotFoundError, ServiceUnavailableError, ValidationError } from '../core/errors.ts';
import { lineageOf } from '../core/http/lineage.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import type { Logger } from '../core/logger.ts';
import { planLimits, tierOf } from '../core/plans.ts';
import type { RequestScope } from '../core/request-scope.ts';
import { openBilledRun, type RunScope } from '../core/runs/billed-run.ts';
import type { SecretBox } from '../core/secret-box.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import type { UserStore } from '../users/user.store.ts';
import { CODE_SERVER_UNAVAILABLE, CODE_SERVER_UNAVAILABLE_MESSAGE } from '../adapters/machines/local.ts';
import { DEFAULT_INSTANCE_TYPE, INSTANCE_TYPES, type CodeServerRecord, type InstanceTypeName, type LaunchInput } from './code-server.schema.ts';
import type { CodeServerStore } from './code-server.store.ts';
import type { Machines } from './machines.ts';

export interface CodeServerPorts {
  readonly codeServers: CodeServerStore;
  readonly machines: Machines;
  readonly credits: Credits;
  readonly usageLogs: UsageLogWriter;
  readonly users: Pick<UserStore, 'get'>;
  readonly secretBox: SecretBox;
  readonly keysReader: KeysReader;
  readonly clock: Clock;
}

/** Launch and start need credits for this many minutes at the type's rate (SPEC part 8). */
export const CREDIT_FLOOR_MINUTES = 10;
/** The billing tick's period (SPEC part 8): every 5 minutes while running. */
export const BILLING_PERIOD_MS = 5 * 60_000;
const MINUTE_MS = 60_000;
/** The usage record's type for running time charged (SPEC part 3). */
export const CODE_SERVER_BILLING = 'CODE_SERVER_BILLING';

/** The keys a setup run and the status's `credentials` read (SPEC 4.12). */
const KEY_NAMES = ['github_pat', 'aws_access_key_id', 'aws_secret_access_key', 'aws_region'] as const;

function typeOf(name: string) {
  return INSTANCE_TYPES.find((t) => t.instanceType === name);
}

function rateOf(name: InstanceTypeName): number {
  return typeOf(name)?.creditsPerMinute ?? 0;
}

/** `GET /code-server/instance-types`: the catalogue, served with or without a backend. */
export function instanceTypes() {
  return { instanceTypes: INSTANCE_TYPES.map((t) => ({ ...t })), default: DEFAULT_INSTANCE_TYPE };
}

/** Who may use a code server: a backend to run it, and a plan that includes it (SPEC 4.12). */
async function admit(actor: Actor, ports: CodeServerPorts): Promise<{ user: UserActor; email: string | null }> {
  const user = requireUser(actor);
  if (ports.machines.backend === 'none') throw new ServiceUnavailableError(CODE_SERVER_UNAVAILABLE_MESSAGE, CODE_SERVER_UNAVAILABLE);
  // Read here rather than from auth's read: the tier and email must be the account's current ones.
  const account = await ports.users.get(user.userId);
  if (!planLimits(tierOf(account as { readonly tier?: unknown } | null)).codeServer)
    throw new AccessDeniedError('A code server needs an active starter or professional plan; upgrade your subscription to use it.');
  return { user, email: account?.email ?? null };
}

const monthOf = (at: number) => new Date(at).toISOString().slice(0, 7);
const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());

/** A key's first characters, enough to tell which one is stored and never enough to use it. */
function prefixOf(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  return `${value.slice(0, Math.min(4, Math.floor(value.length / 3)))}...`;
}

async function credentialsOf(user: UserActor, ports: CodeServerPorts) {
  const keys = await ports.keysReader.readKeys(user, user.userId, KEY_NAMES);
  return {
    hasGithubPat: keys['github_pat'] !== undefined,
    githubPatPrefix: prefixOf(keys['github_pat']),
    hasAwsKeys: keys['aws_access_key_id'] !== undefined && keys['aws_secret_access_key'] !== undefined,
    awsAccessKeyPrefix: prefixOf(keys['aws_access_key_id']),
  };
}

/** A script's error output with the user's key values masked: a script that echoes its environment must not show it in the status. */
async function withoutKeys(text: string, user: UserActor, ports: CodeServerPorts): Promise<string> {
  const keys = await ports.keysReader.readKeys(user, user.userId, KEY_NAMES);
  return Object.values(keys)
    .filter((value) => value.length >= 4)
    .reduce((masked, value) => masked.split(value).join('***'), text);
}

const passwordContext = (userId: string) => ({ userId, purpose: 'code-server-password' });

/** The record as SPEC part 2 shows it: url and password only while running, keys as prefixes only. */
async function view(record: CodeServerRecord | null, user: UserActor, ports: CodeServerPorts) {
  const now = ports.clock.now();
  const credentials = await credentialsOf(user, ports);
  if (record === null) return { status: 'none' as const, alias: user.alias, setupScript: null, totalMinutesUsed: 0, currentMonthMinutes: 0, credentials };
  const rate = rateOf(record.instanceType);
  const running = record.status === 'running';
  return {
    status: record.status,
    instanceId: record.instanceId,
    alias: record.alias,
    instanceType: record.instanceType,
    creditsPerMinute: rate,
    costPerMinute: roundCredits(rate * CREDIT_PRICE_USD),
    totalMinutesUsed: record.totalMinutesUsed,
    currentMonthMinutes: record.month === monthOf(now) ? record.monthMinutes : 0,
    launchedAt: iso(record.launchedAt),
    stoppedAt: iso(record.stoppedAt),
    ...(running && record.url !== null ? { url: record.url } : {}),
    ...(running && record.password !== null ? { password: await ports.secretBox.open(record.password, passwordContext(record.userId)) } : {}),
    setupScript: record.setupScript,
    ...(record.setupStatus !== null ? { setupStatus: record.setupStatus } : {}),
    ...(record.setupError !== null ? { setupError: record.setupError } : {}),
    credentials,
  };
}

/** 402 unless the balance pays `CREDIT_FLOOR_MINUTES` at `rate`. */
async function requireFloor(userId: string, rate: number, ports: CodeServerPorts): Promise<void> {
  await ports.credits.applyMonthlyGrant(userId);
  const balance = (await ports.users.get(userId))?.credits ?? 0;
  const needed = roundCredits(rate * CREDIT_FLOOR_MINUTES);
  if (balance < needed)
    throw new CreditsRefusedError(
      needed,
      balance,
      `Insufficient credits: a code server needs credits for at least ${CREDIT_FLOOR_MINUTES} minutes at ${rate} credits per minute (${needed}); the balance is ${balance}.`,
    );
}

/** One write of a state change; a concurrent change answers 409 instead of being overwritten. */
async function write(
  ports: CodeServerPorts,
  expected: CodeServerRecord | null,
  next: Omit<CodeServerRecord, 'version' | 'updatedAt'>,
): Promise<CodeServerRecord> {
  const written = await ports.codeServers.replace(expected, next);
  if (written === null) throw new ConflictError('The code server changed while this request ran; read its status and try again.');
  return written;
}

function blank(user: UserActor): Omit<CodeServerRecord, 'version' | 'updatedAt'> {
  return {
    userId: user.userId,
    status: 'none',
    instanceId: null,
    instanceType: DEFAULT_INSTANCE_TYPE,
    alias: user.alias,
    password: null,
    url: null,
    launchedAt: null,
    stoppedAt: null,
    setupScript: null,
    setupStatus: null,
    setupError: null,
    setupCommandId: null,
    billedThrough: null,
    totalMinutesUsed: 0,
    monthMinutes: 0,
    month: null,
  };
}

/**
 * `GET /code-server/status`: the record, moved on by what the machine reports (launching to
 * running once it boots; a setup run to its end).
 */
export async function getStatus(scope: RequestScope, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  let record = await ports.codeServers.get(user.userId);
  if (record !== null && record.instanceId !== null && record.status === 'launching') {
    const machine = await ports.machines.describe(record.instanceId);
    if (machine?.state === 'running' && machine.url !== null)
      record = (await ports.codeServers.replace(record, { ...record, status: 'running', url: machine.url })) ?? record;
  }
  if (record !== null && record.instanceId !== null && record.status === 'running' && record.setupStatus === 'running' && record.setupCommandId !== null) {
    const setup = await ports.machines.setupState(record.instanceId, record.setupCommandId);
    if (setup.state !== 'running') {
      const setupError = setup.state === 'failed' ? await withoutKeys(setup.error, user, ports) : null;
      record = (await ports.codeServers.replace(record, { ...record, setupStatus: setup.state, setupError })) ?? record;
    }
  }
  return view(record, user, ports);
}

/** `POST /code-server/launch`: a new instance, when the user has none running or stopped. */
export async function launch(scope: RequestScope, input: LaunchInput, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  const type = typeOf(input.instanceType ?? DEFAULT_INSTANCE_TYPE);
  if (type === undefined)
    throw new ValidationError(
      `Unknown instanceType ${JSON.stringify(input.instanceType)}: use one of ${INSTANCE_TYPES.map((t) => t.instanceType).join(', ')}.`,
      [],
      'INVALID_INSTANCE_TYPE',
    );
  const existing = await ports.codeServers.get(user.userId);
  if (existing !== null && (existing.status === 'launching' || existing.status === 'running' || existing.status === 'stopped'))
    throw new ConflictError(`You already have a code server (${existing.status}); one per user. Start, stop or terminate it instead.`);
  await requireFloor(user.userId, type.creditsPerMinute, ports);
  const password = randomBytes(18).toString('base64url');
  const { instanceId } = await ports.machines.launch({ instanceType: type.instanceType, password, ownerId: user.userId, alias: user.alias });
  const now = ports.clock.now();
  const base = existing ?? { ...blank(user), version: 0, updatedAt: now };
  const written = await ports.codeServers.replace(existing, {
    ...base,
    status: 'launching',
    instanceId,
    instanceType: type.instanceType,
    alias: user.alias,
    password: await ports.secretBox.seal(password, passwordContext(user.userId)),
    url: null,
    launchedAt: now,
    stoppedAt: null,
    setupScript: input.setupScript ?? base.setupScript,
    setupStatus: null,
    setupError: null,
    setupCommandId: null,
    billedThrough: now,
  });
  if (written === null) {
    // Another launch won the race: this instance must not run unowned.
    await ports.machines
      .terminate(instanceId)
      .catch((error: unknown) => scope.log.error('orphaned code server instance not terminated', { error, instanceId }));
    throw new ConflictError('You already have a code server; one per user.');
  }
  return {
    status: written.status,
    instanceId,
    instanceType: type.instanceType,
    creditsPerMinute: type.creditsPerMinute,
    alias: written.alias,
    message: 'Launching: the IDE is ready in about 3 to 5 minutes; poll GET /code-server/status for its url and password.',
  };
}

/** The caller's instance, or 404 when there is none to act on. */
async function current(user: UserActor, ports: CodeServerPorts): Promise<CodeServerRecord & { instanceId: string }> {
  const record = await ports.codeServers.get(user.userId);
  if (record === null || record.instanceId === null || record.status === 'none' || record.status === 'terminated')
    throw new NotFoundError('No code server instance found; launch one with POST /code-server/launch.');
  return record as CodeServerRecord & { instanceId: string };
}

/** `POST /code-server/start`: a stopped instance boots again, when the balance pays the floor. */
export async function start(scope: RequestScope, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  const record = await current(user, ports);
  if (record.status !== 'stopped') throw new ConflictError(`The code server is ${record.status}; only a stopped one can be started.`);
  await requireFloor(user.userId, rateOf(record.instanceType), ports);
  await ports.machines.start(record.instanceId);
  const now = ports.clock.now();
  await write(ports, record, { ...record, status: 'launching', url: null, launchedAt: now, stoppedAt: null, billedThrough: now });
  return {
    status: 'launching' as const,
    instanceId: record.instanceId,
    message: 'Starting: the IDE is back in about 30 seconds; poll GET /code-server/status.',
  };
}

/** `POST /code-server/stop`: running time is charged up to now and nothing after. */
export async function stop(scope: RequestScope, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  const record = await current(user, ports);
  if (record.status === 'stopped') throw new ConflictError('The code server is already stopped; use start.', 'INSTANCE_STOPPED');
  await ports.machines.stop(record.instanceId);
  await settleAndWrite(record, { status: 'stopped' }, ports, runScope(scope), 'stop');
  return {
    status: 'stopped' as const,
    instanceId: record.instanceId,
    message: 'Stopped: no charges while stopped; start it again with POST /code-server/start.',
  };
}

/** `POST /code-server/terminate`: the instance and its disk are destroyed; the saved setup script and minutes stay. */
export async function terminate(scope: RequestScope, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  const record = await current(user, ports);
  await ports.machines.terminate(record.instanceId);
  await settleAndWrite(record, { status: 'terminated' }, ports, runScope(scope), 'terminate');
  return { status: 'terminated' as const, message: 'Terminated: the instance and its disk are destroyed; your knowledge files are kept.' };
}

/** `POST /code-server/save-setup-script`: kept for the next setup run (and launch). */
export async function saveSetupScript(scope: RequestScope, setupScript: string, ports: CodeServerPorts) {
  const { user } = await admit(scope.actor, ports);
  const record = await ports.codeServers.get(user.userId);
  const now = ports.clock.now();
  await write(ports, record, { ...(record ?? { ...blank(user), version: 0, updatedAt: now }), setupScript });
  return { message: 'Setup script saved.', setupScript };
}

/**
 * `POST /code-server/setup`: runs the given or saved script on the running instance, with the
 * user's keys and identity in its environment, handed to the machine out of band (never in the
 * command text, the answer or a log).
 */
export async function setup(scope: RequestScope, setupScript: string | undefined, ports: CodeServerPorts) {
  const { user, email } = await admit(scope.actor, ports);
  const record = await current(user, ports);
  if (record.status === 'stopped') throw new ConflictError('The code server is stopped; start it before running a setup script.', 'INSTANCE_STOPPED');
  if (record.status !== 'running') throw new ConflictError('The code server is still launching; run the setup script once its status is running.');
  if (record.setupStatus === 'running') throw new ConflictError('A setup script is already running; wait for it to complete or fail.');
  const script = setupScript ?? record.setupScript;
  if (script === null || script.trim() === '')
    throw new ValidationError('No setup script: give setupScript or save one with POST /code-server/save-setup-script.');
  const keys = await ports.keysReader.readKeys(user, user.userId, KEY_NAMES);
  const environment: Record<string, string> = {
    GITHUB_PAT: keys['github_pat'] ?? '',
    AWS_ACCESS_KEY_ID: keys['aws_access_key_id'] ?? '',
    AWS_SECRET_ACCESS_KEY: keys['aws_secret_access_key'] ?? '',
    AWS_REGION: keys['aws_region'] ?? 'us-east-1',
    USER_ALIAS: user.alias ?? '',
    USER_EMAIL: email ?? '',
  };
  const { commandId } = await ports.machines.runSetup(record.instanceId, { script, environment });
  await write(ports, record, { ...record, setupStatus: 'running', setupError: null, setupCommandId: commandId });
  return { setupStatus: 'running' as const, message: 'Setup script started; poll GET /code-server/status for setupStatus.', commandId };
}

function runScope(scope: Pick<RequestScope, 'lineage' | 'log'>): RunScope {
  return { lineage: scope.lineage, log: scope.log };
}

/**
 * Charges `minutes` of running time through the billed-run use case, with its CODE_SERVER_BILLING
 * record. A balance short of the charge pays what it holds (the instance is being stopped).
 */
async function charge(
  record: CodeServerRecord,
  minutes: number,
  cause: string,
  ports: Pick<CodeServerPorts, 'credits' | 'usageLogs'>,
  scope: RunScope,
  autoStopped: boolean,
): Promise<number> {
  if (minutes <= 0) return 0;
  const rate = rateOf(record.instanceType);
  const bill = async (credits: number) => {
    const run = await openBilledRun(
      {
        kind: 'code-server',
        payer: record.userId,
        upfront: { credits, reason: 'code-server-time' },
        line: 'written',
        refunds: { notRun: 'code-server-time-refund', notStarted: 'code-server-time-refund' },
        readKeys: () => Promise.resolve(null),
      },
      { credits: ports.credits, usageLogs: ports.usageLogs },
      scope,
    );
    await run.finish(
      { started: true },
      {
        resourceId: record.instanceId ?? record.userId,
        resourceType: 'code-server',
        requestType: CODE_SERVER_BILLING,
        status: 'success',
        request: { instanceType: record.instanceType, minutes, creditsPerMinute: rate, cause },
        response: { creditsCharged: credits, autoStopped },
        durationMs: minutes * MINUTE_MS,
      },
    );
    return credits;
  };
  const owed = roundCredits(minutes * rate);
  try {
    return await bill(owed);
  } catch (error) {
    if (!(error instanceof InsufficientCreditsError)) throw error;
    const available = roundCredits(Math.max(0, error.available));
    scope.log.warn('code server time not fully covered by the balance', { userId: record.userId, owed, available });
    return available > 0 ? bill(Math.min(available, owed)) : 0;
  }
}

/** The minutes since `billedThrough` up to `until`: whole minutes at a tick, any started minute at a stop. */
function minutesBetween(from: number | null, until: number, round: 'floor' | 'ceil'): number {
  if (from === null || until <= from) return 0;
  return Math[round]((until - from) / MINUTE_MS);
}

/** Charges what ran since the last charge, then writes the new state; the charge is claimed first, so it is made once. */
async function settleAndWrite(
  record: CodeServerRecord,
  change: { status: 'stopped' | 'terminated' },
  ports: CodeServerPorts,
  scope: RunScope,
  cause: string,
  autoStopped = false,
): Promise<void> {
  const now = ports.clock.now();
  const minutes = record.status === 'stopped' ? 0 : minutesBetween(record.billedThrough, now, 'ceil');
  const month = monthOf(now);
  await write(ports, record, {
    ...record,
    ...change,
    url: null,
    stoppedAt: change.status === 'stopped' ? now : record.stoppedAt,
    billedThrough: null,
    setupStatus: change.status === 'terminated' ? null : record.setupStatus,
    setupCommandId: change.status === 'terminated' ? null : record.setupCommandId,
    ...(change.status === 'terminated' ? { password: null } : {}),
    totalMinutesUsed: record.totalMinutesUsed + minutes,
    monthMinutes: (record.month === month ? record.monthMinutes : 0) + minutes,
    month,
  });
  await charge(record, minutes, cause, ports, scope, autoStopped);
}

export interface TickReport {
  readonly charged: number;
  readonly stopped: number;
  readonly credits: number;
}

/**
 * The billing tick (every 5 minutes, and `POST /admin/code-server/billing-tick`): each instance
 * accruing time is charged its whole minutes up to the period that ended at `at`, once (the
 * period is claimed by moving `billedThrough` in one conditional write before the charge, so a
 * tick run twice for a period finds nothing left); one whose balance then cannot pay the next
 * period is stopped.
 */
export async function billingTick(at: number, ports: Omit<CodeServerPorts, 'keysReader' | 'secretBox'>, log: Logger): Promise<TickReport> {
  const periodEnd = Math.floor(at / BILLING_PERIOD_MS) * BILLING_PERIOD_MS;
  let charged = 0;
  let stopped = 0;
  let credits = 0;
  for (const listed of await ports.codeServers.listBilled()) {
    const scope: RunScope = { lineage: lineageOf(`tick_${randomUUID()}`, undefined), log };
    try {
      const record = await ports.codeServers.get(listed.userId);
      if (record === null || (record.status !== 'launching' && record.status !== 'running') || record.billedThrough === null) continue;
      const minutes = minutesBetween(record.billedThrough, periodEnd, 'floor');
      if (minutes <= 0) continue;
      const rate = rateOf(record.instanceType);
      const balance = (await ports.users.get(record.userId))?.credits ?? 0;
      const stopNow = balance - minutes * rate < rate * (BILLING_PERIOD_MS / MINUTE_MS);
      const now = ports.clock.now();
      const month = monthOf(now);
      const claimed = await ports.codeServers.replace(record, {
        ...record,
        billedThrough: record.billedThrough + minutes * MINUTE_MS,
        totalMinutesUsed: record.totalMinutesUsed + minutes,
        monthMinutes: (record.month === month ? record.monthMinutes : 0) + minutes,
        month,
      });
      if (claimed === null) continue; // another tick, or a stop, came first
      credits += await charge(claimed, minutes, 'billing-tick', ports, scope, stopNow);
      charged += 1;
      if (stopNow && claimed.instanceId !== null) {
        await ports.machines.stop(claimed.instanceId);
        // Time between the period's end and now is too little to bill once the balance is spent: the stop ends it.
        const stoppedAt = ports.clock.now();
        await ports.codeServers.replace(claimed, { ...claimed, status: 'stopped', url: null, stoppedAt, billedThrough: null });
        stopped += 1;
        log.info('code server stopped: the balance cannot pay the next billing period', { userId: claimed.userId, instanceId: claimed.instanceId });
      }
    } catch (error) {
      log.error('code server billing failed for one instance', { error, userId: listed.userId });
    }
  }
  return { charged, stopped, credits: roundCredits(credits) };
}
