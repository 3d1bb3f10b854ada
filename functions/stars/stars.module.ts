import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createStarStore } from './star.store.ts';

/** Stars on agents, MCP servers and skills (SPEC 4.14); the count is public. */
export const starsArea = defineArea({
  name: 'stars',
  routes: [
    { method: 'POST', path: '/stars', handler: 'star-resource', auth: 'required' },
    { method: 'DELETE', path: '/stars', handler: 'unstar-resource', auth: 'required' },
    { method: 'GET', path: '/stars', handler: 'list-stars', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/stars/check', handler: 'check-star', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/stars/count/{resourceId}', handler: 'count-stars', auth: 'public', callers: 'role' },
  ],
  tables: [
    // One item per (resourceId, userId): a resource's stars are one partition (their count a Query);
    // `byUser` lists a user's stars, newest first.
    {
      name: 'stars',
      partitionKey: 'resourceId',
      sortKey: 'userId',
      numberKeys: ['starredAt'],
      indexes: [{ name: 'byUser', partitionKey: 'userId', sortKey: 'starredAt' }],
    },
  ],
  provides: {
    stars: providePort({ tables: ['stars'] }, ({ db }) => createStarStore(db)),
  },
  uses: ['agents', 'mcpServers', 'skills', 'users'],
});
