import { defineArea, providePort, KIB } from '../../lib/manifest/define.ts';
import { createActionStore } from './action.store.ts';

/** Python actions and inline code (SPEC 4.3). */
export const actionsArea = defineArea({
  name: 'actions',
  routes: [
    // Actions (SPEC 4.3): envelope A. Runs through the router stop at the 120-second gateway limit
    // (SPEC part 8: 504); the direct runtime routes and inline code honour the action's own timeout
    // (at most 300 s), so their routes allow 300 s plus time to bill and log. Keep these timeouts equal
    // to GATEWAY_TIMEOUT_SEC and DIRECT_ROUTE_TIMEOUT_SEC in functions/actions/execution.rules.ts (a unit test checks).
    { method: 'POST', path: '/action/create', handler: 'create-action', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB },
    { method: 'PUT', path: '/action/update', handler: 'update-action', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB },
    { method: 'DELETE', path: '/action/delete', handler: 'delete-action', auth: 'required', style: 'A' },
    { method: 'GET', path: '/action/list', handler: 'list-actions', auth: 'optional', callers: 'role', style: 'A' },
    { method: 'GET', path: '/action/info/{actionId}', handler: 'get-action-info', auth: 'optional', callers: 'role', style: 'A' },
    { method: 'GET', path: '/action/{actionId}', handler: 'run-action', auth: 'required', callers: 'role', style: 'A', timeoutSec: 120 },
    { method: 'POST', path: '/action/{actionId}', handler: 'run-action', auth: 'required', callers: 'role', style: 'A', timeoutSec: 120 },
    {
      method: 'POST',
      path: '/action/python-128mb/inline-code',
      handler: 'run-inline-code',
      auth: 'required',
      callers: 'role',
      style: 'A',
      timeoutSec: 310,
      maxBodyBytes: 512 * KIB,
    },
    { method: 'GET', path: '/action/python-128mb/{actionId}', handler: 'run-action-direct', auth: 'required', callers: 'role', style: 'A', timeoutSec: 310 },
    { method: 'POST', path: '/action/python-128mb/{actionId}', handler: 'run-action-direct', auth: 'required', callers: 'role', style: 'A', timeoutSec: 310 },
  ],
  tables: [
    // Actions; the id is the key (a supplied id that exists is a 409). `byOwner` lists an owner's, the
    // sparse `publicActions` index the public ones others may run (active and deprecated).
    {
      name: 'actions',
      partitionKey: 'actionId',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
        { name: 'publicActions', partitionKey: 'publicListing', sortKey: 'createdAt' },
      ],
    },
    // One counter per owner: how many actions they hold, for the per-owner limit (core/db/owner-count.ts).
    { name: 'action-counts', partitionKey: 'ownerId' },
  ],
  provides: {
    actions: providePort({ tables: ['actions', 'action-counts'] }, ({ db }) => createActionStore(db)),
  },
  uses: ['users', 'credits', 'keys', 'keysReader', 'compute', 'usageLogs'],
});
