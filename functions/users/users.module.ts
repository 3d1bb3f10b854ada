import { defineArea } from '../../lib/manifest/define.ts';

/** Accounts, aliases, profiles and credits of the caller (SPEC 4.14). */
export const usersArea = defineArea({
  name: 'users',
  routes: [
    // Users (SPEC 4.14)
    { method: 'GET', path: '/user/info', handler: 'get-user-info', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/user/credits', handler: 'get-user-credits', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/user/alias', handler: 'set-user-alias', auth: 'required' },
    { method: 'PUT', path: '/user/alias', handler: 'set-user-alias', auth: 'required' },
    { method: 'PUT', path: '/user/profile', handler: 'update-user-profile', auth: 'required' },
    { method: 'DELETE', path: '/user/account', handler: 'delete-user-account', auth: 'required' },
  ],
  tables: [
    { name: 'users', partitionKey: 'userId', indexes: [{ name: 'byKind', partitionKey: 'kind', sortKey: 'createdAt' }], numberKeys: ['createdAt'] },
    // alias -> userId; the key makes aliases unique.
    { name: 'aliases', partitionKey: 'alias' },
  ],
  uses: ['users', 'credits', 'tokens'],
});
