import type { ScheduleSpec } from '../../../lib/manifest/types.ts';
import type { AreaModule } from '../../../lib/manifest/types.ts';
import { portsForArea, type Ports } from '../../ports.ts';
import type { Logger } from '../logger.ts';
import { withSecretScope } from '../secret-scope.ts';
import { runWithDeadline } from './deadline.ts';
import type { QueueDefinition } from './queue.ts';
import type { StorageEventDefinition } from './storage-event.ts';
import type { ServiceDefinition } from './service.ts';

/** What a scheduled handler receives: its area's view of the platform, a log, and when it was due. */
export interface ScheduleContext {
  readonly ports: Ports;
  readonly log: Logger;
  /** The time the timetable fired (not when the handler started), so runs can be idempotent per slot. */
  readonly firedAt: Date;
  /** Aborted when the entry point's timeout passes: stop work then. */
  readonly signal: AbortSignal;
}

/** A scheduled entry point's handler module exports one of these (`<handler>.schedule.ts`). */
export interface ScheduleDefinition {
  readonly kind: 'schedule';
  run(ctx: ScheduleContext): Promise<void>;
}

export function defineSchedule(definition: { run(ctx: ScheduleContext): Promise<void> }): ScheduleDefinition {
  return { kind: 'schedule', run: (ctx) => definition.run(ctx) };
}

/** Any non-HTTP entry point's definition, by kind. */
export type EntryPointDefinition = ScheduleDefinition | QueueDefinition | StorageEventDefinition | ServiceDefinition;

/** An entry point with its handler's definition and its area, as both wirings bind them. */
export interface BoundSchedule {
  readonly spec: ScheduleSpec;
  readonly definition: ScheduleDefinition;
  readonly area: AreaModule;
}

/**
 * Runs one firing of a schedule the same way in both wirings: the area's view of the platform, a
 * log line with the outcome and duration, the timeout, and secrets scrubbed from what it logs. A
 * failure is logged, not thrown: the next firing is the retry.
 */
export async function runSchedule(bound: BoundSchedule, ports: Ports, firedAt: Date): Promise<'succeeded' | 'failed' | 'timed-out'> {
  return withSecretScope(async () => {
    const log = ports.log.child({ entryPoint: bound.spec.id, firedAt: firedAt.toISOString() });
    const started = ports.clock.now();
    const { outcome, error } = await runWithDeadline(bound.spec.timeoutSec, `schedule ${bound.spec.id}`, (signal) =>
      bound.definition.run({ ports: portsForArea(ports, bound.area), log, firedAt, signal }),
    );
    if (outcome === 'failed') log.error('scheduled run failed', { error });
    log.info('scheduled run ended', { outcome, durationMs: ports.clock.now() - started });
    return outcome;
  });
}
