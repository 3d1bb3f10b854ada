import { defineArea } from '../../lib/manifest/define.ts';

/** Access tokens and role tokens (SPEC 4.14). */
export const tokensArea = defineArea({
  name: 'tokens',
  routes: [
    // Access tokens (SPEC 4.14)
    { method: 'POST', path: '/user/token/create', handler: 'create-token', auth: 'required' },
    { method: 'GET', path: '/user/token/list', handler: 'list-tokens', auth: 'required' },
    { method: 'GET', path: '/user/token/{tokenId}', handler: 'get-token', auth: 'required' },
    { method: 'PUT', path: '/user/token/update', handler: 'update-token', auth: 'required' },
    { method: 'POST', path: '/user/token/revoke', handler: 'revoke-token', auth: 'required' },
    { method: 'POST', path: '/user/token/{tokenId}/regenerate', handler: 'regenerate-token', auth: 'required' },
    // Role tokens (SPEC 4.14): scoped tokens with attached keys
    { method: 'POST', path: '/role-token/create', handler: 'create-role-token', auth: 'required' },
    { method: 'GET', path: '/role-token/list', handler: 'list-role-tokens', auth: 'required' },
    { method: 'POST', path: '/role-token/revoke', handler: 'revoke-role-token', auth: 'required' },
    // Public: anyone holding a role token may check it, but not probe tokens at speed.
    { method: 'POST', path: '/role-token/validate', handler: 'validate-role-token', auth: 'public', callers: 'role', rateLimit: { limit: 60, windowSec: 60 } },
  ],
  tables: [
    // Access-token metadata, one item per token id; `byUser` lists a user's tokens.
    {
      name: 'tokens',
      partitionKey: 'tokenId',
      numberKeys: ['createdAt'],
      indexes: [{ name: 'byUser', partitionKey: 'userId', sortKey: 'createdAt' }],
    },
    // SHA-256 digest -> tokenId, read with a strongly consistent GetItem on every request.
    { name: 'token-digests', partitionKey: 'digest' },
  ],
  uses: ['tokens', 'users', 'keys'],
});
