import type * as z from 'zod';
import type { AreaModule, QueueSpec } from '../../../lib/manifest/types.ts';
import { portsForArea, type Ports } from '../../ports.ts';
import type { Logger } from '../logger.ts';
import { withSecretScope } from '../secret-scope.ts';
import { runWithDeadline } from './deadline.ts';

/** What a queue handler receives: its area's view of the platform, a log, and one task. */
export interface QueueContext<P> {
  readonly ports: Ports;
  readonly log: Logger;
  /** The payload as the handler's schema parsed it. */
  readonly payload: P;
  /** The task's id (the SQS message id in the cloud), the same on every attempt. */
  readonly taskId: string;
  /** 1 on the first delivery; a task may be delivered more than once, so handlers are idempotent. */
  readonly attempt: number;
  /** Aborted when the entry point's timeout passes: stop work then. */
  readonly signal: AbortSignal;
}

/** A queue entry point's handler module exports one of these (`<handler>.queue.ts`). */
export interface QueueDefinition<P = unknown> {
  readonly kind: 'queue';
  /** Checks each task's payload on delivery; a payload it refuses is set aside at once, never retried. */
  readonly payload: z.ZodType<P>;
  run(ctx: QueueContext<P>): Promise<void>;
}

export function defineQueue<P>(definition: { payload: z.ZodType<P>; run(ctx: QueueContext<P>): Promise<void> }): QueueDefinition<P> {
  return { kind: 'queue', payload: definition.payload, run: (ctx) => definition.run(ctx) };
}

/** A queue entry point with its handler's definition and its area, as both wirings bind them. */
export interface BoundQueue {
  readonly spec: QueueSpec;
  readonly definition: QueueDefinition;
  readonly area: AreaModule;
}

/** One delivery of one task. */
export interface TaskDelivery {
  readonly taskId: string;
  /** The payload's JSON, as sent. */
  readonly body: string;
  readonly attempt: number;
}

/**
 * `invalid-payload`: the body is not JSON or the handler's schema refuses it; retrying cannot
 * help, so the wirings set the task aside at once. `failed` and `timed-out` are retried until the
 * entry point's `maxAttempts`.
 */
export type TaskOutcome = 'succeeded' | 'failed' | 'timed-out' | 'invalid-payload';

/** SQS allows 1 to 1000 receives before redriving to the dead-letter queue; Lambda at most 900 s. */
export function validateQueueSpec(spec: QueueSpec): void {
  if (!Number.isInteger(spec.maxAttempts) || spec.maxAttempts < 1 || spec.maxAttempts > 1000)
    throw new Error(`Queue entry point ${spec.id}: maxAttempts must be a whole number from 1 to 1000 (SQS maxReceiveCount), not ${spec.maxAttempts}.`);
  if (!Number.isInteger(spec.timeoutSec) || spec.timeoutSec < 1 || spec.timeoutSec > 900)
    throw new Error(`Queue entry point ${spec.id}: timeoutSec must be a whole number from 1 to 900 (Lambda's limit), not ${spec.timeoutSec}.`);
}

/**
 * Runs one delivery of a task the same way in both wirings: the payload checked against the
 * handler's schema, the area's view of the platform, the timeout, secrets scrubbed from what it
 * logs, and a log line with the outcome. Failures are reported, not thrown: retrying and setting
 * aside are the wiring's part (the local queue, SQS with its dead-letter queue).
 */
export async function runQueueTask(bound: BoundQueue, ports: Ports, task: TaskDelivery): Promise<TaskOutcome> {
  return withSecretScope(async () => {
    const { spec } = bound;
    const log = ports.log.child({ entryPoint: spec.id, taskId: task.taskId, attempt: task.attempt });
    const payload = parsePayload(bound.definition, task.body);
    if (!payload.ok) {
      // The payload itself is not logged: it may hold what the sender should not have logged either.
      log.error('task set aside: its payload does not fit the handler', { issues: payload.issues });
      return 'invalid-payload';
    }
    const started = ports.clock.now();
    const { outcome, error } = await runWithDeadline(spec.timeoutSec, `task ${task.taskId} of ${spec.id}`, (signal) =>
      bound.definition.run({ ports: portsForArea(ports, bound.area), log, payload: payload.value, taskId: task.taskId, attempt: task.attempt, signal }),
    );
    const durationMs = ports.clock.now() - started;
    if (outcome === 'succeeded') log.info('task run ended', { outcome, durationMs });
    // The last attempt is an error: the task is set aside next (the local dead letters, the cloud's dead-letter queue).
    else if (task.attempt >= spec.maxAttempts) log.error('task run ended; no attempts left', { outcome, durationMs, maxAttempts: spec.maxAttempts, error });
    else log.warn('task run ended; it will be retried', { outcome, durationMs, maxAttempts: spec.maxAttempts, error });
    return outcome;
  });
}

function parsePayload(definition: QueueDefinition, body: string): { ok: true; value: unknown } | { ok: false; issues: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, issues: ['the body is not JSON'] };
  }
  const parsed = definition.payload.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`) };
}
