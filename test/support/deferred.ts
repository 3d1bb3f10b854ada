/** A promise settled by hand: a write that lasts until the test says so. */
export function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Whether `work` has settled once everything queued so far has run. */
export async function settled(work: Promise<unknown>): Promise<boolean> {
  let done = false;
  work.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}
