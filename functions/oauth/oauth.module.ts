import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { oauthSettings } from './oauth.settings.ts';
import { createOAuthStateStore } from './oauth.store.ts';

/** OAuth sign-in to third parties, whose tokens become keys (SPEC 4.13). */
export const oauthArea = defineArea({
  name: 'oauth',
  routes: [
    // OAuth (SPEC 4.13). The callback is a platform extra: the provider sends the user's browser there,
    // which carries no platform credential, so the single-use state identifies the account.
    { method: 'GET', path: '/oauth/authorize/{provider}', handler: 'authorize', auth: 'required' },
    { method: 'GET', path: '/oauth/callback/{provider}', handler: 'callback', auth: 'public', callers: 'role' },
  ],
  tables: [
    // OAuth authorizations started but not yet completed (SPEC 4.13), keyed by their single-use state.
    { name: 'oauth-states', partitionKey: 'state', ttlAttribute: 'expiresAt' },
  ],
  provides: {
    oauthStates: providePort({ tables: ['oauth-states'] }, ({ db }) => createOAuthStateStore(db)),
  },
  uses: ['users', 'secrets', 'keys', 'secretBox'],
  settings: oauthSettings,
});
