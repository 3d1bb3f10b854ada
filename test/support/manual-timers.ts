import type { MeterTimers } from '../../functions/core/credit-meter.ts';

/**
 * A clock and timer moved by hand, for the run-time meter: `advanceTo` fires what is due in order
 * and lets each callback's promises (a debit) settle before the next.
 */
export function manualTimers() {
  let now = 0;
  const pending: { at: number; fn: () => void; cancelled: boolean }[] = [];
  const timers: MeterTimers = {
    now: () => now,
    after(ms, fn) {
      const timer = { at: now + ms, fn, cancelled: false };
      pending.push(timer);
      return () => void (timer.cancelled = true);
    },
  };
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    timers,
    async advanceTo(ms: number) {
      for (;;) {
        const due = pending.filter((t) => !t.cancelled && t.at <= ms).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        pending.splice(pending.indexOf(due), 1);
        now = due.at;
        due.fn();
        await settle();
      }
      now = ms;
    },
    scheduled: () => pending.filter((t) => !t.cancelled).map((t) => t.at),
  };
}
