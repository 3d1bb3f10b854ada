import { defineArea } from '../../lib/manifest/define.ts';

/** Operator endpoints. */
export const adminArea = defineArea({
  name: 'admin',
  routes: [
    // Operators
    { method: 'POST', path: '/admin/users', handler: 'create-user', auth: 'admin' },
    { method: 'GET', path: '/admin/users', handler: 'list-users', auth: 'admin' },
    { method: 'POST', path: '/admin/users/{userId}/credits', handler: 'grant-credits', auth: 'admin' },
    // The plan, set by hand (issue 35): how tiers change where Stripe is not configured.
    { method: 'POST', path: '/admin/users/{userId}/tier', handler: 'set-tier', auth: 'admin' },
  ],
  uses: ['users', 'credits', 'tokens'],
});
