/** How one run of an entry point's handler ended. */
export type RunOutcome = 'succeeded' | 'failed' | 'timed-out';

/** The outcome, and what the handler threw when it failed. */
export interface DeadlineResult {
  readonly outcome: RunOutcome;
  readonly error?: unknown;
}

/**
 * Runs `work` against a deadline of `timeoutSec`: when it passes, `signal` aborts and the result
 * is `timed-out` without waiting for the work (which should stop on the signal). The one timeout
 * race of the non-HTTP entry points (schedules, queues, storage events), so they all end alike.
 */
export async function runWithDeadline(timeoutSec: number, what: string, work: (signal: AbortSignal) => Promise<void>): Promise<DeadlineResult> {
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<DeadlineResult>((resolve) => {
    timer = setTimeout(() => {
      deadline.abort(new Error(`${what} timed out after ${timeoutSec} s`));
      resolve({ outcome: 'timed-out' });
    }, timeoutSec * 1000);
  });
  // Started inside the promise chain, so a handler that throws synchronously is a failure too.
  const run = Promise.resolve()
    .then(() => work(deadline.signal))
    .then(
      (): DeadlineResult => ({ outcome: 'succeeded' }),
      (error: unknown): DeadlineResult => ({ outcome: 'failed', error }),
    );
  try {
    return await Promise.race([run, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
