/**
 * Waits for every one of `writes` (none is left in flight behind an answer: a Lambda may be frozen
 * once it answers), then throws the first failure, as `Promise.all` would have but later.
 */
export async function allSettledOrThrow(writes: readonly Promise<unknown>[]): Promise<void> {
  throwFirstFailure(await Promise.allSettled(writes));
}

/** Throws the reason of the first rejected outcome, if any. */
export function throwFirstFailure(outcomes: readonly PromiseSettledResult<unknown>[]): void {
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
}
