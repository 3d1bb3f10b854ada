/**
 * Run time as credits, and the meter that takes them while a run goes. Billing follows what the
 * platform observes (its own clock), never figures user code reports, and a run never uses run time
 * nobody paid for: each stretch is paid before it starts, and a run whose next stretch cannot be
 * paid is stopped when the paid time is up.
 */
import { roundCredits, type CreditChange, type Credits } from './credits.ts';
import { InsufficientCreditsError } from './errors.ts';

/** Run time is billed in steps of this many milliseconds, each started step in full. */
export const RUN_TIME_STEP_MS = 100;

/** What one second of run time costs at `memoryMb`: a gigabyte-second is one credit. */
export function creditsPerSecond(memoryMb: number): number {
  return memoryMb / 1024;
}

/** Credits for `ms` of run time at `memoryMb`, in whole 0.1 s steps (rounded up), to 4 decimals. */
export function runTimeCredits(memoryMb: number, ms: number): number {
  const steps = Math.ceil(Math.max(0, ms) / RUN_TIME_STEP_MS);
  return roundCredits((creditsPerSecond(memoryMb) * steps * RUN_TIME_STEP_MS) / 1000);
}

/** Where the meter reads the time and sets its timer; tests pass a hand-driven one. */
export interface MeterTimers {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const realTimers: MeterTimers = {
  now: () => performance.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface RunMeterOptions {
  readonly credits: Pick<Credits, 'debit' | 'grant'>;
  readonly userId: string;
  /** Reason and request id of the ledger lines. */
  readonly change: CreditChange;
  readonly memoryMb: number;
  /** A flat rate instead of the memory-based one (voice time: 50 credits a minute). */
  readonly creditsPerSecond?: number;
  /** Run time already paid for by what was taken before the run. */
  readonly includedMs: number;
  /** Run time each debit pays for ahead (rounded up to whole steps). */
  readonly tickMs: number;
  /**
   * Called once, when the paid time is up and no more could be paid: the caller stops the run.
   * The error is the debit's (InsufficientCreditsError when the balance is short).
   */
  readonly onExhausted: (error: unknown) => void;
  readonly timers?: MeterTimers;
}

export interface RunMeter {
  /** Run time paid for so far, counted from the meter's start, the included time with it. */
  readonly paidMs: number;
  /** Credits the meter has taken so far (the included time not among them). */
  readonly paidCredits: number;
  /** Stops paying ahead; waits for a debit in flight, so `settle` sees every credit taken. */
  stop(): Promise<void>;
  /**
   * After `stop`: keeps the run time the run used (`usedMs` by the platform's clock, never more than
   * was paid for) and gives the rest back in one grant. Returns the run-time credits kept.
   */
  settle(usedMs: number): Promise<number>;
}

/**
 * Starts metering a run that has just begun. At the end of the included time, and at the end of
 * each paid stretch, it pays `tickMs` ahead; when the balance cannot pay a whole stretch it pays for
 * the steps the balance still covers, so a run ends when the balance is spent, not a stretch early.
 * When not even one step can be paid, `onExhausted` is called at the end of the paid time.
 */
export function startRunMeter(options: RunMeterOptions): RunMeter {
  const timers = options.timers ?? realTimers;
  const tickMs = Math.max(1, Math.ceil(options.tickMs / RUN_TIME_STEP_MS)) * RUN_TIME_STEP_MS;
  const startedAt = timers.now();
  let paidMs = options.includedMs;
  let paidCredits = 0;
  let stopped = false;
  let cancelTimer: (() => void) | null = null;
  let inFlight: Promise<void> | null = null;
  const rate = options.creditsPerSecond;
  const costOf = (ms: number) =>
    rate === undefined ? runTimeCredits(options.memoryMb, ms) : roundCredits((rate * Math.ceil(Math.max(0, ms) / RUN_TIME_STEP_MS) * RUN_TIME_STEP_MS) / 1000);

  function scheduleNext(): void {
    if (stopped) return;
    cancelTimer = timers.after(Math.max(0, startedAt + paidMs - timers.now()), () => {
      cancelTimer = null;
      inFlight = payAhead().finally(() => (inFlight = null));
    });
  }

  async function payAhead(): Promise<void> {
    try {
      await buy();
    } catch (error) {
      if (!stopped) options.onExhausted(error);
      return;
    }
    scheduleNext();
  }

  async function buy(): Promise<void> {
    try {
      await pay(tickMs);
    } catch (error) {
      if (!(error instanceof InsufficientCreditsError)) throw error;
      const stepCost = costOf(RUN_TIME_STEP_MS);
      // The epsilon keeps 0.3 / 0.1 from flooring to 2.
      const affordable = Math.min(Math.floor(error.available / stepCost + 1e-9), tickMs / RUN_TIME_STEP_MS - 1);
      if (affordable < 1) throw error;
      await pay(affordable * RUN_TIME_STEP_MS);
    }
  }

  async function pay(ms: number): Promise<void> {
    const cost = costOf(ms);
    await options.credits.debit(options.userId, cost, options.change);
    paidMs += ms;
    paidCredits = roundCredits(paidCredits + cost);
  }

  scheduleNext();

  return {
    get paidMs() {
      return paidMs;
    },
    get paidCredits() {
      return paidCredits;
    },
    async stop() {
      stopped = true;
      cancelTimer?.();
      cancelTimer = null;
      await inFlight;
    },
    async settle(usedMs) {
      const billedMs = Math.min(Math.max(0, usedMs - options.includedMs), paidMs - options.includedMs);
      const kept = Math.min(costOf(billedMs), paidCredits);
      const unused = roundCredits(paidCredits - kept);
      if (unused > 0) {
        await options.credits.grant(options.userId, unused, { reason: `${options.change.reason}: unused`, requestId: options.change.requestId });
      }
      return kept;
    },
  };
}
