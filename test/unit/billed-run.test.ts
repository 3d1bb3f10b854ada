/**
 * The billed run (functions/core/runs/billed-run.ts), the one place runs are billed: credits taken
 * before the run with its keys, given back when it could not run or never started, run time metered
 * and settled by the platform's clock, extra charges within the balance, and the records. No AWS,
 * no platform: an in-memory balance and a hand-driven clock.
 */
import { describe, expect, it } from 'vitest';
import type { CreditChange, Credits, LedgerEntry } from '../../functions/core/credits.ts';
import { roundCredits } from '../../functions/core/credits.ts';
import { InsufficientCreditsError, ValidationError } from '../../functions/core/errors.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import type { Logger } from '../../functions/core/logger.ts';
import { openBilledRun, type BilledRunPorts, type RunDeclaration } from '../../functions/core/runs/billed-run.ts';
import type { UsageLogInput, UsageLogRecord } from '../../functions/core/usage-log.ts';
import { manualTimers } from '../support/manual-timers.ts';

/** A balance with conditional debits, as the real one, its ledger, the records and the log lines. */
function platform(balance: number, failures: { line?: Error; record?: Error; grant?: Error } = {}) {
  const state = {
    balance,
    ledger: [] as { amount: number; reason: string }[],
    records: [] as UsageLogInput[],
    embedUsage: [] as { embedTokenId: string; usage: { credits?: number; minutes?: number } }[],
    logged: [] as string[],
  };
  const entry = (amount: number) => ({ amount }) as LedgerEntry;
  const debit = async (_userId: string, amount: number, change: CreditChange) => {
    if (state.balance < amount) throw new InsufficientCreditsError(amount, state.balance);
    state.balance = roundCredits(state.balance - amount);
    state.ledger.push({ amount: -amount, reason: change.reason });
    return entry(-amount);
  };
  const credits: Pick<Credits, 'debit' | 'debitWithPendingLine' | 'grant'> = {
    debit,
    async debitWithPendingLine(userId, amount, change) {
      const line = await debit(userId, amount, change);
      const pending = failures.line ? Promise.reject(failures.line) : Promise.resolve(line);
      pending.catch(() => undefined);
      return { balanceAfter: state.balance, line: pending };
    },
    async grant(_userId, amount, change) {
      if (failures.grant) throw failures.grant;
      state.balance = roundCredits(state.balance + amount);
      state.ledger.push({ amount, reason: change.reason });
      return entry(amount);
    },
  };
  const ports: BilledRunPorts = {
    credits,
    usageLogs: {
      async write(input) {
        if (failures.record) throw failures.record;
        state.records.push(input);
        return {} as UsageLogRecord;
      },
    },
    embeds: { addUsage: async (embedTokenId, usage) => void state.embedUsage.push({ embedTokenId, usage }) },
  };
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message) => void state.logged.push(message),
    error: (message) => void state.logged.push(message),
    child: () => log,
  };
  return { state, ports, scope: { lineage: lineageOf('req-1', undefined), log } };
}

const keys = { openai: 'sk-test-000000' };

function declaration(overrides: Partial<RunDeclaration<typeof keys>> = {}): RunDeclaration<typeof keys> {
  return {
    kind: 'test',
    payer: 'u1',
    upfront: { credits: 1, reason: 'run x' },
    refunds: { notRun: 'run x refund: not run', notStarted: 'run x refund: never started', unused: 'run x: unused' },
    readKeys: async () => keys,
    ...overrides,
  };
}

const record = { resourceId: 'r1', resourceType: 'test', status: 'success', request: {}, response: {}, durationMs: 5 } as const;

describe('openBilledRun', () => {
  it('takes the credits before the run and hands over the keys', async () => {
    // Prepare
    const { state, ports, scope } = platform(5);
    // Act
    const run = await openBilledRun(declaration(), ports, scope);
    // Assess
    expect(run.keys).toEqual(keys);
    expect(state.ledger).toEqual([{ amount: -1, reason: 'run x' }]);
  });

  it("refuses a short balance with the kind's own error, reading no further", async () => {
    // Prepare
    const { state, ports, scope } = platform(0.5);
    const refusal = new ValidationError('the kind says no');
    // Act
    const opened = openBilledRun(declaration({ refused: () => refusal }), ports, scope);
    // Assess
    await expect(opened).rejects.toBe(refusal);
    expect(state.ledger).toEqual([]);
  });

  it('gives the credits back when the keys cannot be read, and throws the keys’ error', async () => {
    // Prepare
    const { state, ports, scope } = platform(5);
    const unreadable = new Error('kms down');
    // Act
    const opened = openBilledRun(declaration({ readKeys: () => Promise.reject(unreadable) }), ports, scope);
    // Assess
    await expect(opened).rejects.toBe(unreadable);
    expect(state.ledger).toEqual([
      { amount: -1, reason: 'run x' },
      { amount: 1, reason: 'run x refund: not run' },
    ]);
    expect(state.balance).toBe(5);
  });

  it('takes nothing for a run that costs nothing up front', async () => {
    // Prepare
    const { state, ports, scope } = platform(0);
    // Act
    const run = await openBilledRun(declaration({ upfront: { credits: 0, reason: 'free' } }), ports, scope);
    await run.abandon();
    // Assess
    expect(state.ledger).toEqual([]);
  });
});

describe('abandon', () => {
  it('gives the credits back, and a ledger line that failed fails the answer', async () => {
    // Prepare
    const { state, ports, scope } = platform(5, { line: new Error('ledger down') });
    const run = await openBilledRun(declaration(), ports, scope);
    // Act
    const abandoned = run.abandon();
    // Assess
    await expect(abandoned).rejects.toThrow('ledger down');
    expect(state.balance).toBe(5);
  });
});

describe('finish', () => {
  it('keeps the part a started run keeps, gives back the rest and records what was billed', async () => {
    // Prepare
    const { state, ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ upfront: { credits: 4, reason: 'hold' } }), ports, scope);
    // Act
    const { creditsUsed, written } = await run.finish({ started: true, kept: 1.5 }, record);
    // Assess
    expect(creditsUsed).toBe(1.5);
    expect(written.every((w) => w.status === 'fulfilled')).toBe(true);
    expect(state.ledger).toEqual([
      { amount: -4, reason: 'hold' },
      { amount: 2.5, reason: 'run x: unused' },
    ]);
    expect(state.records).toEqual([expect.objectContaining({ ...record, userId: 'u1', creditsUsed: 1.5, lineage: scope.lineage })]);
  });

  it('gives everything back for a run whose code never started, whatever it claims to have kept', async () => {
    // Prepare
    const { state, ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ upfront: { credits: 4, reason: 'hold' } }), ports, scope);
    // Act
    const { creditsUsed } = await run.finish({ started: false, kept: 4, extra: { credits: 3, reason: 'tokens' } }, record);
    // Assess
    expect(creditsUsed).toBe(0);
    expect(state.balance).toBe(10);
    expect(state.ledger.at(-1)).toEqual({ amount: 4, reason: 'run x refund: never started' });
  });

  it('takes an extra charge when the balance allows, and bills without it (logged) when it does not', async () => {
    // Prepare
    const rich = platform(10);
    const poor = platform(2);
    const richRun = await openBilledRun(declaration(), rich.ports, rich.scope);
    const poorRun = await openBilledRun(declaration(), poor.ports, poor.scope);
    const observed = { started: true, extra: { credits: 3, reason: 'tokens' } };
    // Act
    const charged = await richRun.finish(observed, record);
    const short = await poorRun.finish(observed, record);
    // Assess
    expect([charged.creditsUsed, short.creditsUsed]).toEqual([4, 1]);
    expect([rich.state.balance, poor.state.balance]).toEqual([6, 1]);
    expect(poor.state.logged).toEqual(['extra credits not covered by the balance']);
  });

  it('reports a failed ledger line and a failed record, the record still attempted after the line failed', async () => {
    // Prepare
    const { ports, scope } = platform(5, { line: new Error('ledger down'), record: new Error('records down') });
    const run = await openBilledRun(declaration(), ports, scope);
    // Act
    const { written } = await run.finish({ started: true }, record);
    // Assess
    expect(written.map((w) => (w.status === 'rejected' ? (w.reason as Error).message : 'ok'))).toEqual(['ledger down', 'ok', 'records down']);
  });

  it('logs, rather than fails, a ledger line of a kind whose answer has already gone out', async () => {
    // Prepare
    const { state, ports, scope } = platform(5, { line: new Error('ledger down') });
    const run = await openBilledRun(declaration({ lineFailure: 'logged' }), ports, scope);
    // Act
    const { written } = await run.finish({ started: true }, record);
    // Assess
    expect(written.every((w) => w.status === 'fulfilled')).toBe(true);
    expect(state.logged).toEqual(['test ledger line not written']);
  });

  it("adds an embed visitor's credits, and its minutes when the kind counts them, to the embed's usage", async () => {
    // Prepare
    const chat = platform(5);
    const voice = platform(5);
    const clock = manualTimers();
    const rate = { memoryMb: 1024, creditsPerSecond: 1, includedMs: 1000, tickMs: 1000, reason: 'time', timers: clock.timers };
    const chatRun = await openBilledRun(declaration({ embedTokenId: 'emb-1' }), chat.ports, chat.scope);
    const voiceRun = await openBilledRun(declaration({ embedTokenId: 'emb-2', rate }), voice.ports, voice.scope);
    voiceRun.startMeter(() => undefined);
    await clock.advanceTo(1500);
    // Act
    await chatRun.finish({ started: true }, record);
    await voiceRun.finish({ started: true, usedMs: 1500, countsMinutes: true }, record);
    // Assess
    expect(chat.state.embedUsage).toEqual([{ embedTokenId: 'emb-1', usage: { credits: 1 } }]);
    expect(voice.state.embedUsage).toEqual([{ embedTokenId: 'emb-2', usage: { minutes: 1500 / 60_000, credits: 1.5 } }]);
  });

  it('settles once, however often it is asked', async () => {
    // Prepare
    const { state, ports, scope } = platform(5);
    const run = await openBilledRun(declaration({ upfront: { credits: 2, reason: 'hold' } }), ports, scope);
    // Act
    await Promise.all([run.finish({ started: true, kept: 1 }, record), run.finish({ started: true, kept: 1 }, record)]);
    // Assess
    expect(state.records).toHaveLength(1);
    expect(state.balance).toBe(4);
  });
});

describe('metered run time', () => {
  const rate = (timers: ReturnType<typeof manualTimers>['timers']) => ({ memoryMb: 1024, includedMs: 1000, tickMs: 1000, reason: 'run time', timers });

  it('pays ahead past the included time and keeps only the time used by the platform’s clock', async () => {
    // Prepare
    const clock = manualTimers();
    const { state, ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ rate: rate(clock.timers) }), ports, scope);
    run.startMeter(() => undefined);
    await clock.advanceTo(1500);
    // Act
    const { creditsUsed, keptMs } = await run.finish({ started: true, usedMs: 1500 }, record);
    // Assess: the first credit pays the first second; 0.5 s more at a credit a second
    expect(creditsUsed).toBe(1.5);
    expect(keptMs).toBe(1500);
    expect(state.balance).toBe(8.5);
  });

  it('stops a run whose balance cannot pay the next stretch, at the end of what was paid', async () => {
    // Prepare
    const clock = manualTimers();
    const { ports, scope } = platform(1.3);
    const run = await openBilledRun(declaration({ rate: rate(clock.timers) }), ports, scope);
    const stops: unknown[] = [];
    run.startMeter((cause) => stops.push(cause));
    // Act
    await clock.advanceTo(5000);
    // Assess
    expect(run.paidMs).toBe(1300);
    expect(stops).toEqual([expect.any(InsufficientCreditsError)]);
  });

  it('lets the kind round what it keeps from what was paid (voice keeps whole paid seconds)', async () => {
    // Prepare
    const clock = manualTimers();
    const { ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ rate: rate(clock.timers) }), ports, scope);
    run.startMeter(() => undefined);
    await clock.advanceTo(2500);
    // Act
    const { keptMs, creditsUsed } = await run.finish({ started: true, usedMs: (paidMs) => Math.floor(paidMs / 1000) * 1000 }, (settled) => ({
      ...record,
      response: { seconds: settled.keptMs / 1000 },
    }));
    // Assess
    expect(keptMs).toBe(3000);
    expect(creditsUsed).toBe(3);
  });

  it('charges no run time for a run that never started', async () => {
    // Prepare
    const clock = manualTimers();
    const { state, ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ rate: rate(clock.timers) }), ports, scope);
    run.startMeter(() => undefined);
    await clock.advanceTo(3500);
    // Act
    const { creditsUsed } = await run.finish({ started: false, usedMs: 3500 }, record);
    // Assess
    expect(creditsUsed).toBe(0);
    expect(state.balance).toBe(10);
    expect(clock.scheduled()).toEqual([]);
  });

  it('starts no meter once the run is finishing (a voice agent that says it started too late)', async () => {
    // Prepare
    const clock = manualTimers();
    const { ports, scope } = platform(10);
    const run = await openBilledRun(declaration({ rate: rate(clock.timers) }), ports, scope);
    // Act
    const finishing = run.finish({ started: false }, record);
    run.startMeter(() => undefined);
    await finishing;
    // Assess
    expect(run.metered).toBe(false);
    expect(clock.scheduled()).toEqual([]);
  });
});
