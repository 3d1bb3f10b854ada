import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createUsageStatsStore } from '../core/usage-counters.store.ts';

/**
 * Analytics over usage (SPEC 4.14): the caller's runs by period, type and resource, and the calls
 * others made to their public resources. Every figure is read from counters the usage recorder adds
 * to as each record is written (functions/core/usage-counters.ts), never from the records, so
 * a request costs the same for a hundred runs as for millions, and agrees with /logs.
 */
export const analyticsArea = defineArea({
  name: 'analytics',
  routes: [
    { method: 'GET', path: '/analytics/overview', handler: 'get-overview', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/analytics/timeseries', handler: 'get-timeseries', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/analytics/resources', handler: 'get-resources', auth: 'required', callers: 'role' },
  ],
  provides: {
    usageStats: providePort({ tables: ['usage-stats'] }, ({ db }) => createUsageStatsStore(db)),
  },
  // Names of the resources shown, and the caller's public resources for others' calls.
  uses: ['agents', 'actions', 'mcpServers'],
});
