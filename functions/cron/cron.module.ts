import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createCronStore } from './cron.store.ts';

/**
 * croner, the calendar behind the schedule parser (core/entry/schedule-expression.ts), which both
 * of this area's functions use: shipped beside their bundles and imported from there (a package
 * shipped as runtime files is external to the bundle, platform-function.ts), so its 27 KB are not
 * inside them (issue 11's 200 KB budget). Locally the repository's node_modules has it.
 */
const SCHEDULE_ENGINE_FILES = ['package.json', 'LICENSE', 'dist/croner.js'].map((file) => `node_modules/croner/${file}`);

/**
 * Cron jobs (SPEC 4.8): scheduled runs of an agent with a fixed prompt. Each job has one schedule in
 * the `schedules` port (EventBridge Scheduler in the cloud, the local platform's timers), which
 * sends its due times to the `run-scheduled` queue entry point; both wirings run that handler.
 */
export const cronArea = defineArea({
  name: 'cron',
  routes: [
    { method: 'POST', path: '/cron', handler: 'create-cron', auth: 'required' },
    { method: 'GET', path: '/cron', handler: 'list-crons', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/cron/{cronId}', handler: 'get-cron', auth: 'required', callers: 'role' },
    { method: 'PUT', path: '/cron/{cronId}', handler: 'update-cron', auth: 'required' },
    { method: 'DELETE', path: '/cron/{cronId}', handler: 'delete-cron', auth: 'required' },
    // Platform extra: "run now", exactly as a scheduled run (same run, billing and failure counting).
    // The wait is the run's, up to the buffered chat's 300 s (SPEC part 8).
    { method: 'POST', path: '/cron/{cronId}/run', handler: 'run-cron', auth: 'required', timeoutSec: 300 },
  ],
  entryPoints: [
    // One attempt: the next due time is the retry, as for the manifest's schedules; a repeat
    // delivery of one due time runs nothing (the job records the last claimed one).
    { kind: 'queue', handler: 'run-scheduled', maxAttempts: 1, timeoutSec: 900 },
  ],
  tables: [
    // Keyed by id alone, so a run loads its job from the id its schedule sends; `byOwner` lists an owner's.
    { name: 'cron-jobs', partitionKey: 'cronId', numberKeys: ['createdAt'], indexes: [{ name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' }] },
    // One counter per owner: how many jobs they hold, for the limit of 20 (core/db/owner-count.ts).
    { name: 'cron-counts', partitionKey: 'ownerId' },
  ],
  provides: {
    cronJobs: providePort({ tables: ['cron-jobs', 'cron-counts'] }, ({ db }) => createCronStore(db)),
  },
  // Runs go through `agentRuns` (the chat service, without a credential): no run token is minted.
  uses: ['agents', 'tokens', 'usageLogs', 'schedules', 'agentRuns'],
  runtimeFiles: SCHEDULE_ENGINE_FILES,
});
