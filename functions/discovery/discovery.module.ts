import { defineArea } from '../../lib/manifest/define.ts';

/** Health and discovery: public, and needing no store. */
export const discoveryArea = defineArea({
  name: 'discovery',
  routes: [
    { method: 'GET', path: '/health', handler: 'get-health', auth: 'public', callers: 'role' },
    { method: 'GET', path: '/.well-known/platform.json', handler: 'get-discovery', auth: 'public', callers: 'role' },
  ],
});
