/**
 * Per-caller admission: the one gate a request passes before it may queue for anything shared (the
 * store client's sockets, the event loop, a tenant's runtime). Each key (a caller) may have
 * `concurrency` requests in progress; one more waits, first come first served, at most `maxWaitMs`
 * and only while fewer than `maxQueued` wait already; past that it is refused at once with
 * `RateLimitedError` (429 with Retry-After), so one caller's load costs others nothing but the
 * refusals' own small cost. In-process state: it bounds what one process does (the local
 * platform, a service task); in Lambda each instance runs one request at a time, so there it never
 * binds (docs/decisions/0038-per-tenant-admission.md).
 */
import { realTimers, type MeterTimers } from './credit-meter.ts';
import { RateLimitedError } from './errors.ts';

export interface AdmissionLimits {
  /** Requests one key may have in progress at once; 0: no limit (every request admitted at once). */
  readonly concurrency: number;
  /** Longest wait for a slot before the refusal. */
  readonly maxWaitMs: number;
  /** Requests of one key that may wait at once; one more is refused without waiting. */
  readonly maxQueued: number;
  /** The setting the refusal names, so an operator knows what to raise. */
  readonly setting: string;
}

/** Ends one admitted request's hold on its slot; calling it again does nothing. */
export type Release = () => void;

export interface Admission {
  /**
   * A slot for `key`, at once when one is free; rejects with `RateLimitedError` when the key is
   * over its share. The caller must call the release it gets when the request ends, however it ends.
   */
  admit(key: string, limits: AdmissionLimits): Promise<Release>;
  /** Keys with requests in progress or waiting, and how many: for tests and diagnostics. */
  snapshot(): ReadonlyMap<string, { readonly active: number; readonly queued: number }>;
}

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly cancel: () => void;
}

interface KeyState {
  active: number;
  readonly queue: Waiter[];
}

const NOTHING_HELD: Release = () => undefined;
/** Retry-After is whole seconds; a slot is usually free well within one. */
const RETRY_AFTER_SEC = 1;

export function createAdmission(timers: MeterTimers = realTimers): Admission {
  const keys = new Map<string, KeyState>();

  /** A release for one slot of `key`: it hands the slot to the first waiter, or frees it. */
  function holding(key: string, state: KeyState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = state.queue.shift();
      if (next !== undefined) {
        next.cancel();
        next.grant(holding(key, state));
        return;
      }
      state.active--;
      // Keys come and go with callers (addresses, tokens): nothing is kept for an idle one.
      if (state.active === 0 && keys.get(key) === state) keys.delete(key);
    };
  }

  function refusal(limits: AdmissionLimits): RateLimitedError {
    return new RateLimitedError(
      RETRY_AFTER_SEC,
      `Too many requests in progress: at most ${limits.concurrency} at once per caller (${limits.setting}); retry after ${RETRY_AFTER_SEC} second.`,
      'CONCURRENCY_LIMITED',
    );
  }

  return {
    admit(key, limits) {
      if (limits.concurrency <= 0) return Promise.resolve(NOTHING_HELD);
      let state = keys.get(key);
      if (state === undefined) {
        state = { active: 0, queue: [] };
        keys.set(key, state);
      }
      if (state.active < limits.concurrency) {
        state.active++;
        return Promise.resolve(holding(key, state));
      }
      if (limits.maxWaitMs <= 0 || state.queue.length >= limits.maxQueued) return Promise.reject(refusal(limits));
      const queue = state.queue;
      return new Promise<Release>((resolve, reject) => {
        const waiter: Waiter = {
          grant: resolve,
          cancel: timers.after(limits.maxWaitMs, () => {
            const index = queue.indexOf(waiter);
            if (index >= 0) queue.splice(index, 1);
            reject(refusal(limits));
          }),
        };
        queue.push(waiter);
      });
    },
    snapshot() {
      return new Map([...keys].map(([key, state]) => [key, { active: state.active, queued: state.queue.length }]));
    },
  };
}
