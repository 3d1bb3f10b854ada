import type { Logger } from '../../functions/core/logger.ts';

/**
 * The local platform is one process serving every tenant: an exception no code caught (a timer's
 * or an event's callback) or a rejection no code handled would, by Node's default, end it for all
 * of them, whatever input caused it. The timers and background work catch their own failures
 * (schedules, the task queue, storage events); this is the last resort behind them, installed by
 * the process's main only (a library user or a test runner keeps its own policy). It logs at error
 * (each one is a platform bug to fix) and carries on: the state that matters is in the stores, and
 * a request or task in progress ends with its own error or timeout.
 *
 * Returns the function that removes the listeners.
 */
export function keepRunningOnUncaughtErrors(log: Logger, target: NodeJS.Process = process): () => void {
  const onException = (error: Error) => log.error('uncaught exception: a platform bug; the platform carries on', { error });
  const onRejection = (reason: unknown) => log.error('unhandled promise rejection: a platform bug; the platform carries on', { error: reason });
  target.on('uncaughtException', onException);
  target.on('unhandledRejection', onRejection);
  return () => {
    target.off('uncaughtException', onException);
    target.off('unhandledRejection', onRejection);
  };
}
