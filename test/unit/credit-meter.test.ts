/** The run-time meter (functions/core/credit-meter.ts): pays ahead, never past the balance, settles by the platform's clock. */
import { describe, expect, it } from 'vitest';
import { runTimeCredits, startRunMeter, type RunMeterOptions } from '../../functions/core/credit-meter.ts';
import { roundCredits, type CreditChange } from '../../functions/core/credits.ts';
import { InsufficientCreditsError } from '../../functions/core/errors.ts';
import { manualTimers } from '../support/manual-timers.ts';

/** A balance with conditional debits, as the real one, and its ledger. */
function wallet(balance: number) {
  const state = { balance, ledger: [] as number[] };
  return {
    state,
    credits: {
      async debit(_userId: string, amount: number, _change: CreditChange) {
        if (state.balance < amount) throw new InsufficientCreditsError(amount, state.balance);
        state.balance = roundCredits(state.balance - amount);
        state.ledger.push(-amount);
        return {} as never;
      },
      async grant(_userId: string, amount: number, _change: CreditChange) {
        state.balance = roundCredits(state.balance + amount);
        state.ledger.push(amount);
        return {} as never;
      },
    },
  };
}

function meterOptions(overrides: Partial<RunMeterOptions> & Pick<RunMeterOptions, 'credits' | 'timers'>): RunMeterOptions {
  return {
    userId: 'u',
    change: { reason: 'chat x run time', requestId: 'r' },
    memoryMb: 1024,
    includedMs: 1000,
    tickMs: 500,
    onExhausted: () => undefined,
    ...overrides,
  };
}

describe('runTimeCredits', () => {
  it('bills memoryMb / 1024 credits a second in started 0.1 s steps', () => {
    expect(runTimeCredits(1024, 0)).toBe(0);
    expect(runTimeCredits(1024, 1)).toBe(0.1);
    expect(runTimeCredits(1024, 730)).toBe(0.8);
    expect(runTimeCredits(128, 1000)).toBe(0.125);
    expect(runTimeCredits(1536, 2000)).toBe(3);
    expect(runTimeCredits(256, -50)).toBe(0);
  });
});

describe('startRunMeter', () => {
  it('pays each stretch ahead when the paid time runs out, and keeps only the time used', async () => {
    // Prepare
    const clock = manualTimers();
    const { state, credits } = wallet(10);
    const meter = startRunMeter(meterOptions({ credits, timers: clock.timers }));
    // Act
    await clock.advanceTo(999);
    const beforeIncludedEnds = [...state.ledger];
    await clock.advanceTo(1700);
    await meter.stop();
    const kept = await meter.settle(1730);
    // Assess: 1 s included, then 0.5 s at 1000 ms and 1500 ms; 0.73 s past the included second is 8 steps
    expect(beforeIncludedEnds).toEqual([]);
    expect(state.ledger).toEqual([-0.5, -0.5, 0.2]);
    expect(kept).toBe(0.8);
    expect(state.balance).toBe(9.2);
    expect(clock.scheduled()).toEqual([]);
  });

  it('bills a flat rate when given one (voice time: 50 credits a minute), whatever the memory', async () => {
    // Prepare
    const clock = manualTimers();
    const { state, credits } = wallet(100);
    const meter = startRunMeter(meterOptions({ credits, timers: clock.timers, memoryMb: 4096, creditsPerSecond: 50 / 60, includedMs: 2400, tickMs: 10_000 }));

    // Act: the included 2.4 s, then one 10 s stretch; 3 s used
    await clock.advanceTo(2400);
    await meter.stop();
    const kept = await meter.settle(3000);

    // Assess: 10 s at 50/60 a second ahead, 0.6 s of it kept
    expect(state.ledger).toEqual([-8.3333, 7.8333]);
    expect(kept).toBe(0.5);
  });

  it('pays the steps the balance still covers, then stops the run at the end of the paid time, never below zero', async () => {
    // Prepare: 1 credit a second, stretches of 1 s, 0.75 credits
    const clock = manualTimers();
    const { state, credits } = wallet(0.75);
    const stops: { at: number; error: unknown }[] = [];
    const meter = startRunMeter(
      meterOptions({ credits, timers: clock.timers, tickMs: 1000, onExhausted: (error) => stops.push({ at: clock.timers.now(), error }) }),
    );
    // Act
    await clock.advanceTo(1699);
    const stoppedEarly = stops.length;
    await clock.advanceTo(5000);
    await meter.stop();
    const kept = await meter.settle(4000);
    // Assess
    expect(stoppedEarly).toBe(0);
    expect(stops).toHaveLength(1);
    expect(stops[0]!.at).toBe(1700);
    expect(stops[0]!.error).toBeInstanceOf(InsufficientCreditsError);
    expect(state.ledger).toEqual([-0.7]);
    expect(kept).toBe(0.7);
    expect(state.balance).toBe(0.05);
  });

  it('gives everything back for a run that never started', async () => {
    // Prepare
    const clock = manualTimers();
    const { state, credits } = wallet(5);
    const meter = startRunMeter(meterOptions({ credits, timers: clock.timers }));
    await clock.advanceTo(2200);
    // Act
    await meter.stop();
    const kept = await meter.settle(0);
    // Assess
    expect(kept).toBe(0);
    expect(state.balance).toBe(5);
  });

  it('waits for a debit in flight when stopped, and stops nothing after that', async () => {
    // Prepare: a debit that completes only when the test says so
    const clock = manualTimers();
    const { state, credits } = wallet(5);
    let release: () => void = () => undefined;
    const slow = {
      ...credits,
      debit: async (userId: string, amount: number, change: CreditChange) => {
        await new Promise<void>((resolve) => (release = resolve));
        return credits.debit(userId, amount, change);
      },
    };
    const stops: unknown[] = [];
    const meter = startRunMeter(meterOptions({ credits: slow, timers: clock.timers, onExhausted: (e) => stops.push(e) }));
    await clock.advanceTo(1000);
    // Act
    let stopped = false;
    const stopping = meter.stop().then(() => (stopped = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    const stoppedBeforeDebit = stopped;
    release();
    await stopping;
    // Assess
    expect(stoppedBeforeDebit).toBe(false);
    expect(meter.paidCredits).toBe(0.5);
    expect(state.ledger).toEqual([-0.5]);
    expect(clock.scheduled()).toEqual([]);
    expect(stops).toEqual([]);
  });

  it('stops the run when the balance cannot be debited at all', async () => {
    // Prepare
    const clock = manualTimers();
    const failing = { debit: async () => Promise.reject(new Error('table unavailable')), grant: async () => ({}) as never };
    const stops: unknown[] = [];
    startRunMeter(meterOptions({ credits: failing, timers: clock.timers, onExhausted: (e) => stops.push(e) }));
    // Act
    await clock.advanceTo(1000);
    // Assess
    expect(stops).toEqual([new Error('table unavailable')]);
  });
});
