/**
 * The Schedules port's contract (functions/core/tasks/schedules.ts), one suite every adapter must
 * pass: `put` creates or replaces schedule `id` (the same put twice is one schedule), keeping its
 * expression, time zone, state, queue and input; a disabled one keeps its definition and does not
 * fire; an enabled one sends `{...input, scheduledTime}` (the due time) to its queue, a rate first
 * at the next multiple of its period; `remove` deletes, and removing one that does not exist is not
 * an error; what EventBridge Scheduler refuses (an expression, a time zone, an id it cannot take)
 * and a queue that is no target are refused by both, keeping nothing. schedules.test.ts runs it
 * against the local schedules and against the EventBridge Scheduler adapter on moto.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleExpressionError } from '../../functions/core/entry/schedule-expression.ts';
import type { ScheduleDefinitionInput, Schedules } from '../../functions/core/tasks/schedules.ts';

/** The time the adapters see: the suite moves it. */
export interface ContractClock {
  at: number;
  now(): number;
}

/** A schedule as the adapter keeps it, read from outside the port (the table, GetSchedule). */
export type StoredSchedule = ScheduleDefinitionInput;

/** A working adapter, and what the suite needs to observe it from outside the port. */
export interface SchedulesUnderTest {
  readonly schedules: Schedules;
  /** Schedule `id` as kept, or null when there is none. */
  read(id: string): Promise<StoredSchedule | null>;
  /** The ids of every schedule kept. */
  ids(): Promise<string[]>;
  /**
   * What rate schedule `id` sends at its next due time (the suite has moved the clock there), or
   * null when it does not fire. `queue` is the entry point's id; `body` the JSON it carries.
   */
  delivery(id: string): Promise<{ readonly queue: string; readonly body: Record<string, unknown> } | null>;
  close(): Promise<void>;
}

export interface SchedulesContractSetup {
  /** The adapter able to send to the queue entry point `queue` (and to no other), seeing `clock`. */
  start(options: { readonly queue: string; readonly clock: ContractClock }): Promise<SchedulesUnderTest>;
}

const QUEUE = 'timed.run';
const PERIOD_MS = 5 * 60_000;

export function describeSchedulesContract(adapterName: string, setup: SchedulesContractSetup): void {
  describe(`Schedules contract: ${adapterName}`, () => {
    const clock: ContractClock = { at: Date.parse('2026-11-24T10:02:30Z'), now: () => clock.at };
    let under: SchedulesUnderTest;
    let schedules: Schedules;
    let slot = Date.parse('2026-11-24T10:05:00Z');

    beforeAll(async () => {
      under = await setup.start({ queue: QUEUE, clock });
      schedules = under.schedules;
    });
    afterAll(async () => {
      await under?.close();
    });

    const schedule = (id: string, over: Partial<ScheduleDefinitionInput> = {}): ScheduleDefinitionInput => ({
      id,
      expression: 'cron(0 8 * * ? *)',
      timezone: 'Europe/Paris',
      enabled: true,
      queue: QUEUE,
      input: { cronId: id, note: 'Grüße' },
      ...over,
    });
    /** Puts a five-minute rate just before the next slot of the suite and moves the clock to it: its due time. */
    const putRateDueNow = async (definition: ScheduleDefinitionInput): Promise<number> => {
      slot += 2 * PERIOD_MS;
      clock.at = slot - 10;
      await schedules.put({ ...definition, expression: 'rate(5 minutes)', timezone: 'UTC' });
      clock.at = slot;
      return slot;
    };
    const occurrences = async (id: string) => (await under.ids()).filter((kept) => kept === id).length;

    it('keeps what is put: expression, time zone, state, queue and input', async () => {
      // Prepare
      const definition = schedule('sched-create');

      // Act
      await schedules.put(definition);

      // Assess
      expect(await under.read('sched-create')).toEqual(definition);
      expect(await occurrences('sched-create')).toBe(1);
    });

    it('sends its input and the due time to its queue, a rate first at the next multiple of its period', async () => {
      // Act
      const due = await putRateDueNow(schedule('sched-rate'));
      const sent = await under.delivery('sched-rate');

      // Assess: the due time compared as a time (Scheduler writes it without milliseconds)
      expect(sent).toEqual({ queue: QUEUE, body: { cronId: 'sched-rate', note: 'Grüße', scheduledTime: expect.any(String) } });
      expect(Date.parse(String(sent?.body['scheduledTime']))).toBe(due);
      expect(due % PERIOD_MS).toBe(0);
    });

    it('is idempotent: the same put twice is one schedule, and a changed put replaces it in place', async () => {
      // Prepare
      const first = schedule('sched-replace');
      const changed = schedule('sched-replace', { expression: 'cron(30 6 ? * MON-FRI *)', timezone: 'America/New_York', input: { cronId: 'other' } });

      // Act
      await schedules.put(first);
      await schedules.put(first);
      const twice = { stored: await under.read('sched-replace'), count: await occurrences('sched-replace') };
      await schedules.put(changed);

      // Assess
      expect(twice).toEqual({ stored: first, count: 1 });
      expect(await under.read('sched-replace')).toEqual(changed);
      expect(await occurrences('sched-replace')).toBe(1);
    });

    it('keeps a disabled schedule with its definition and does not fire it, and fires it again once enabled', async () => {
      // Act
      const disabled = schedule('sched-paused', { enabled: false });
      await schedules.put(disabled);
      const kept = await under.read('sched-paused');
      await putRateDueNow({ ...disabled, enabled: false });
      const whileDisabled = await under.delivery('sched-paused');
      const due = await putRateDueNow({ ...disabled, enabled: true });
      const whileEnabled = await under.delivery('sched-paused');

      // Assess
      expect(kept).toEqual(disabled);
      expect(whileDisabled).toBeNull();
      expect(Date.parse(String(whileEnabled?.body['scheduledTime']))).toBe(due);
    });

    it('removes a schedule, and removing one that does not exist (again, or never put) is not an error', async () => {
      // Prepare
      await schedules.put(schedule('sched-remove'));

      // Act
      await schedules.remove('sched-remove');
      await schedules.remove('sched-remove');
      await schedules.remove('sched-never-put');

      // Assess
      expect(await under.read('sched-remove')).toBeNull();
      expect(await occurrences('sched-remove')).toBe(0);
    });

    it.each([
      ['a cron of five fields', 'five', { expression: 'cron(0 8 * * *)' }],
      ['a cron minute out of range', 'minute', { expression: 'cron(61 8 * * ? *)' }],
      ['a rate of zero', 'zero', { expression: 'rate(0 minutes)' }],
      ['a plural rate of one', 'plural', { expression: 'rate(1 minutes)' }],
      ['no expression syntax at all', 'syntax', { expression: 'every day at 8' }],
      ['a time zone that is not IANA', 'zone', { timezone: 'Mars/Olympus' }],
    ])('refuses %s, keeping nothing and leaving a schedule of the same id as it was', async (_case, name, over) => {
      // Prepare
      const kept = schedule(`sched-invalid-${name}`);
      await schedules.put(kept);

      // Act
      const refused = schedules.put(schedule(`sched-invalid-${name}`, over));
      const refusedNew = schedules.put(schedule(`sched-new-${name}`, over));

      // Assess
      await expect(refused).rejects.toThrow(ScheduleExpressionError);
      await expect(refusedNew).rejects.toThrow(ScheduleExpressionError);
      expect(await under.read(`sched-invalid-${name}`)).toEqual(kept);
      expect(await under.read(`sched-new-${name}`)).toBeNull();
    });

    it.each([
      ['longer than 64 characters', 's'.repeat(65)],
      ['with a space', 'sched one'],
      ['with a slash', 'sched/one'],
      ['empty', ''],
    ])('refuses an id %s (Scheduler cannot name a schedule so), keeping nothing', async (_case, id) => {
      // Act
      const refused = schedules.put(schedule(id));

      // Assess
      await expect(refused).rejects.toThrow(/Schedule id/);
      expect(await under.ids()).not.toContain(id);
    });

    it('takes the longest id Scheduler takes', async () => {
      // Prepare
      const id = `a-Z_0.${'x'.repeat(58)}`;

      // Act
      await schedules.put(schedule(id));

      // Assess
      expect(await under.read(id)).toEqual(schedule(id));
    });

    it('refuses a schedule whose queue it cannot send to, keeping nothing', async () => {
      // Act
      const refused = schedules.put(schedule('sched-no-queue', { queue: 'timed.elsewhere' }));

      // Assess
      await expect(refused).rejects.toThrow(/timed\.elsewhere/);
      expect(await under.read('sched-no-queue')).toBeNull();
    });
  });
}
