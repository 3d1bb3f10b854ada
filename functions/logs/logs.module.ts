import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createLogStore } from './log.store.ts';

/** Usage logs and traces, read by their owner (SPEC 4.13). */
export const logsArea = defineArea({
  name: 'logs',
  routes: [
    // Usage logs (SPEC 4.13); owner only. /logs/user is the SPEC's second name for /logs.
    { method: 'GET', path: '/logs', handler: 'list-logs', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/logs/user', handler: 'list-user-logs', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/logs/{requestId}', handler: 'get-log', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/logs/request/{requestId}/trace', handler: 'get-request-trace', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/logs/trace/{traceId}', handler: 'get-trace', auth: 'required', callers: 'role' },
  ],
  provides: {
    // Reads the usage records the kernel writes (the core area's table).
    logs: providePort({ tables: ['usage-logs'], buckets: ['blobs'] }, ({ db }) => createLogStore(db)),
  },
  uses: ['blobs'],
});
