/**
 * One billed run, whatever runs: a chat, an action, an MCP call, a voice session (and next the
 * code server and paid MCP calls). The billing rules live here once; each kind declares only what
 * differs (who pays, what is taken before the run and why, its run-time rate, what its record
 * holds) and drives its own transport between the steps:
 *
 * 1. `openBilledRun`: the credits taken before the run (a first credit, a minimum, the worst case
 *    held) and the run's keys, at once; no run without both. A short balance is refused with the
 *    kind's own error; keys that cannot be read give the credits back.
 * 2. `run.startMeter`: run time paid ahead by the second while the run goes (core/credit-meter.ts).
 * 3. `run.abandon` when the platform could not start the run: the credits go back.
 * 4. `run.finish`: settlement from what the platform observed (a run whose code never started
 *    costs nothing; one that started keeps its part of what was taken and its metered time, the
 *    rest goes back; extra charges such as model tokens are taken when the balance allows), then
 *    the embed's usage and the usage record, with the first ledger line awaited.
 *
 * A module of the kernel, so the four areas import it without bundling each other's code.
 */
import { startRunMeter, type MeterTimers, type RunMeter } from '../credit-meter.ts';
import { roundCredits, type Credits, type GrantSeen } from '../credits.ts';
import { InsufficientCreditsError } from '../errors.ts';
import type { Lineage } from '../http/lineage.ts';
import type { Logger } from '../logger.ts';
import type { UsageLogInput, UsageLogWriter } from '../usage-log.ts';

/** What an embed's credential spent (the embed store's `addUsage`, named here so no area is imported). */
export interface EmbedUsage {
  addUsage(embedTokenId: string, usage: { credits?: number; minutes?: number }): Promise<void>;
}

export interface BilledRunPorts {
  readonly credits: Pick<Credits, 'debit' | 'debitWithPendingLine' | 'grant'>;
  readonly usageLogs: UsageLogWriter;
  /** Needed only for runs an embed's visitor starts (`embedTokenId`). */
  readonly embeds?: EmbedUsage;
}

/** The request a run belongs to: its ledger lines and record carry its id, its logger says what failed. */
export interface RunScope {
  readonly lineage: Lineage;
  readonly log: Logger;
}

/** Run time billed by the second while the run goes. */
export interface RunRate {
  /** The memory-based rate's memory (a gigabyte-second is one credit). */
  readonly memoryMb: number;
  /** A flat rate instead of the memory-based one (voice time). */
  readonly creditsPerSecond?: number;
  /** Run time the credits taken before the run already pay for. */
  readonly includedMs: number;
  /** Run time each debit pays ahead. */
  readonly tickMs: number;
  /** The meter's ledger reason. */
  readonly reason: string;
  readonly timers?: MeterTimers;
}

/** What a kind of run declares: what differs between a chat, an action, an MCP call and a voice session. */
export interface RunDeclaration<Keys> {
  /** A name for the logs (`chat`, `action`, `mcp`, `voice`). */
  readonly kind: string;
  /** Who pays: the caller, or the owner of what an anonymous caller runs. */
  readonly payer: string;
  /** Credits taken before the run (0: none), and the ledger line's reason. */
  readonly upfront: { readonly credits: number; readonly reason: string; readonly seen?: GrantSeen | undefined };
  /**
   * Whether the run starts while the up-front ledger line is still being written (`pending`, the
   * default; `finish` awaits it), or only once it is written (`written`).
   */
  readonly line?: 'pending' | 'written';
  /**
   * What a failure of a pending ledger line does: fail the answer (`fails`, the default), or be
   * logged (`logged`: a streamed answer whose status has gone out, the run billed and standing).
   */
  readonly lineFailure?: 'fails' | 'logged';
  /** Ledger reasons of what goes back: the run could not be started, its code never started, the unused part. */
  readonly refunds: { readonly notRun: string; readonly notStarted: string; readonly unused?: string };
  /** The kind's answer to a balance that cannot pay `upfront` (a 402 naming what it was for, a close code). */
  readonly refused?: (error: InsufficientCreditsError) => Error;
  /** The keys the run receives, read while the credits are taken. */
  readonly readKeys: () => Promise<Keys>;
  /** Run time billed by the second, for kinds that meter it. */
  readonly rate?: RunRate;
  /** An embed's credential that started the run: its usage is added to the embed's. */
  readonly embedTokenId?: string | undefined;
  // --- billing (engineer H, issue 35): a paid MCP server's per-call author fee ---
  /** Credits the run passes on to someone else (an author's per-call fee): see `RunPayee`. */
  readonly payee?: RunPayee | undefined;
  // --- end billing ---
}

/** What the platform observed of a run, and what the kind charges besides run time. */
export interface RunObservation {
  /** Whether the run's code started: a run that never started costs nothing. */
  readonly started: boolean;
  /**
   * Run time the meter keeps, by the platform's clock (never more than was paid); a function of the
   * run time paid for when the kind's rule needs it (voice keeps whole seconds that were paid).
   */
  readonly usedMs?: number | ((paidMs: number) => number);
  /** Of the credits taken before the run, those a run that started keeps (all of them by default). */
  readonly kept?: number;
  /** A charge on top, taken only when the balance allows (a shortfall is logged): a chat's model tokens. */
  readonly extra?: { readonly credits: number; readonly reason: string };
  /** Whether the run time kept also counts against an embed's minutes (voice), besides its credits. */
  readonly countsMinutes?: boolean;
}

/** What the run's record states: everything but its payer, lineage and credits, which `finish` adds. */
export type RunRecord = Omit<UsageLogInput, 'userId' | 'creditsUsed' | 'lineage'>;

/** What the settlement found: the credits billed, and the run time the meter kept. */
export interface Settlement {
  readonly creditsUsed: number;
  readonly keptMs: number;
}

export interface FinishedRun extends Settlement {
  /** The ledger line, the embed's usage and the record, as written (in that order): the kind reports failures. */
  readonly written: readonly PromiseSettledResult<unknown>[];
}

export interface BilledRun<Keys> {
  readonly keys: Keys;
  /**
   * The up-front ledger line in flight: awaited by `abandon` and `finish`; a kind whose run never
   * reaches either (a stream that failed first) awaits it itself.
   */
  readonly line: Promise<unknown>;
  /** Whether the meter was started. */
  readonly metered: boolean;
  /** Run time paid for so far (the included time with it). */
  readonly paidMs: number;
  /** Starts paying run time ahead; once, and not after `finish`. `onExhausted` stops the run. */
  startMeter(onExhausted: (cause: unknown) => void): void;
  /** Stops paying ahead, waiting for a debit in flight (`finish` does it too): the run is over. */
  stopMeter(): Promise<void>;
  /** The platform could not start the run: the credits go back and the ledger line is awaited (its failure thrown). */
  abandon(): Promise<void>;
  /** Settles, then writes the embed's usage and the record; once. */
  finish(observed: RunObservation, record: RunRecord | ((settled: Settlement) => RunRecord)): Promise<FinishedRun>;
}

/**
 * Takes the credits a run needs before it starts and reads its keys, at once. Refused with the
 * kind's error when the balance is short; when the keys cannot be read the credits go back and the
 * keys' error is thrown (the ledger line's, if that failed too).
 */
export async function openBilledRun<Keys>(declared: RunDeclaration<Keys>, ports: BilledRunPorts, scope: RunScope): Promise<BilledRun<Keys>> {
  const declaration = withPayeeFee(declared); // billing (H, issue 35): the payee's fee is taken with the up-front credits
  const { payer, upfront } = declaration;
  const change = { reason: upfront.reason, requestId: scope.lineage.requestId };
  // The line in an object: a promise returned from an async function would be awaited with it.
  const take = async (): Promise<{ line: Promise<unknown> }> => {
    if (upfront.credits <= 0) return { line: Promise.resolve(null) };
    if (declaration.line === 'written') return { line: Promise.resolve(await ports.credits.debit(payer, upfront.credits, change, upfront.seen)) };
    return ports.credits.debitWithPendingLine(payer, upfront.credits, change, upfront.seen);
  };
  const [taken, keysRead] = await Promise.allSettled([take(), declaration.readKeys()]);
  if (taken.status === 'rejected') {
    const refusal = taken.reason instanceof InsufficientCreditsError && declaration.refused ? declaration.refused(taken.reason) : taken.reason;
    throw refusal;
  }
  const rawLine = taken.value.line;
  const line =
    declaration.lineFailure === 'logged'
      ? rawLine.then(
          () => undefined,
          (error: unknown) => scope.log.error(`${declaration.kind} ledger line not written`, { error, userId: payer, reason: upfront.reason }),
        )
      : rawLine;
  // Refused before the run: the line's failure, if any, is the error, whatever `lineFailure` says.
  const abandon = async () => {
    await giveCreditsBack(declaration, ports, scope, upfront.credits, declaration.refunds.notRun);
    await rawLine;
  };
  if (keysRead.status === 'rejected') {
    await abandon();
    throw keysRead.reason;
  }

  let meter: RunMeter | null = null;
  let finished: Promise<FinishedRun> | null = null;
  return {
    keys: keysRead.value,
    line,
    get metered() {
      return meter !== null;
    },
    get paidMs() {
      return meter?.paidMs ?? 0;
    },
    startMeter(onExhausted) {
      const { rate } = declaration;
      if (rate === undefined || meter !== null || finished !== null) return;
      meter = startRunMeter({
        credits: ports.credits,
        userId: payer,
        change: { reason: rate.reason, requestId: scope.lineage.requestId },
        memoryMb: rate.memoryMb,
        ...(rate.creditsPerSecond !== undefined ? { creditsPerSecond: rate.creditsPerSecond } : {}),
        includedMs: rate.includedMs,
        tickMs: rate.tickMs,
        onExhausted,
        ...(rate.timers ? { timers: rate.timers } : {}),
      });
    },
    async stopMeter() {
      await meter?.stop();
    },
    abandon,
    finish(observed, record) {
      finished ??= (async () => {
        const { creditsUsed, keptMs, givenBack } = await settle(declaration, ports, scope, meter, observed);
        const { embedTokenId } = declaration;
        // The give-back never fails (it is logged), so it goes out with the writes, not before them.
        const written = await Promise.allSettled([
          line,
          embedTokenId === undefined || ports.embeds === undefined
            ? Promise.resolve()
            : ports.embeds.addUsage(embedTokenId, observed.countsMinutes ? { minutes: keptMs / 60_000, credits: creditsUsed } : { credits: creditsUsed }),
          ports.usageLogs.write({
            ...(typeof record === 'function' ? record({ creditsUsed, keptMs }) : record),
            lineage: scope.lineage,
            userId: payer,
            creditsUsed,
          }),
          givenBack,
          observed.started ? payPayee(declaration, ports, scope) : Promise.resolve(), // billing (H, issue 35)
        ]);
        return { creditsUsed, keptMs, written: written.slice(0, 3) };
      })();
      return finished;
    },
  };
}

/**
 * The settlement: the meter keeps the run time used and gives back the rest; what was taken before
 * the run goes back in full when the code never started, else all but its kept part; an extra
 * charge is taken when the balance allows. When the meter's settlement or the extra charge fails
 * (not a short balance) the run still stands: it is logged, and billed what was taken.
 */
async function settle(
  declaration: RunDeclaration<unknown>,
  ports: BilledRunPorts,
  scope: RunScope,
  meter: RunMeter | null,
  observed: RunObservation,
): Promise<{ creditsUsed: number; keptMs: number; givenBack: Promise<void> }> {
  const { upfront, refunds, payer } = declaration;
  const kept = observed.started ? Math.min(observed.kept ?? upfront.credits, upfront.credits) : 0;
  await meter?.stop();
  const usedMs = !observed.started || meter === null ? 0 : typeof observed.usedMs === 'function' ? observed.usedMs(meter.paidMs) : (observed.usedMs ?? 0);
  let givenBack: Promise<void> = Promise.resolve();
  try {
    const runTime = meter === null ? 0 : await meter.settle(usedMs);
    givenBack = giveCreditsBack(
      declaration,
      ports,
      scope,
      roundCredits(upfront.credits - kept),
      observed.started ? (refunds.unused ?? refunds.notStarted) : refunds.notStarted,
    );
    const extra = observed.started && observed.extra !== undefined && observed.extra.credits > 0 ? observed.extra : null;
    if (extra === null) return { creditsUsed: roundCredits(kept + runTime), keptMs: usedMs, givenBack };
    try {
      await ports.credits.debit(payer, extra.credits, { reason: extra.reason, requestId: scope.lineage.requestId });
      return { creditsUsed: roundCredits(kept + runTime + extra.credits), keptMs: usedMs, givenBack };
    } catch (error) {
      if (!(error instanceof InsufficientCreditsError)) throw error;
      scope.log.warn('extra credits not covered by the balance', { reason: extra.reason, credits: extra.credits });
      return { creditsUsed: roundCredits(kept + runTime), keptMs: usedMs, givenBack };
    }
  } catch (error) {
    scope.log.error(`settling ${declaration.kind} credits failed`, { error, payer });
    return { creditsUsed: roundCredits(upfront.credits + (meter?.paidCredits ?? 0)), keptMs: usedMs, givenBack };
  }
}

/** Grants `amount` back to the payer; nothing when it is nothing. A failure is logged, never thrown: the run's answer stands. */
async function giveCreditsBack(declaration: RunDeclaration<unknown>, ports: BilledRunPorts, scope: RunScope, amount: number, reason: string): Promise<void> {
  if (amount <= 0) return;
  try {
    await ports.credits.grant(declaration.payer, amount, { reason, requestId: scope.lineage.requestId });
  } catch (error) {
    scope.log.error(`${declaration.kind} credit refund failed`, { error, payer: declaration.payer, amount });
  }
}

// --- billing (engineer H, issue 35): a paid MCP server's per-call author fee ---

/**
 * Credits a run passes on: taken from the payer with the up-front credits (so a short balance
 * refuses the run before it starts), kept by a run that started and then granted to `userId`; given
 * back with the rest when the run never started.
 */
export interface RunPayee {
  readonly userId: string;
  readonly credits: number;
  readonly reason: string;
}

/** The declaration with the payee's fee added to what is taken before the run. */
function withPayeeFee<Keys>(declaration: RunDeclaration<Keys>): RunDeclaration<Keys> {
  const fee = declaration.payee?.credits ?? 0;
  if (fee <= 0) return declaration;
  return { ...declaration, upfront: { ...declaration.upfront, credits: roundCredits(declaration.upfront.credits + fee) } };
}

/** Grants the payee its fee once the run started; a failure is logged (the payer was billed, the run stands). */
async function payPayee(declaration: RunDeclaration<unknown>, ports: BilledRunPorts, scope: RunScope): Promise<void> {
  const payee = declaration.payee;
  if (payee === undefined || payee.credits <= 0) return;
  try {
    await ports.credits.grant(payee.userId, payee.credits, { reason: payee.reason, requestId: scope.lineage.requestId });
  } catch (error) {
    scope.log.error(`${declaration.kind} payee credits not granted`, { error, payee: payee.userId, credits: payee.credits });
  }
}
// --- end billing ---
