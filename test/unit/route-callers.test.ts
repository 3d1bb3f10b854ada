import { describe, expect, it } from 'vitest';
import { assertCallerAdmitted, type Actor, type UserActor } from '../../functions/core/auth/actor.ts';
import { AccessDeniedError } from '../../functions/core/errors.ts';
import { routes } from '../../lib/manifest/index.ts';
import { formatRoute } from '../../lib/manifest/spec-coverage.ts';

/** Handler names of routes that create, change or delete: none of them may be opened to role tokens. */
const CHANGING_HANDLER = /^(create|update|delete|rollback|revoke|regenerate|store|set)-/;

const user = (via: UserActor['via'], scope: UserActor['scope']): UserActor => ({
  kind: 'user',
  userId: 'u1',
  alias: 'alice',
  isAdmin: false,
  via,
  tokenId: null,
  scope,
  roleKeys: scope === 'role' ? [] : null,
});

describe('manifest callers', () => {
  it('declares callers on every route', () => {
    // Assess: the type requires it; this catches a route built around the `route()` helper.
    const undeclared = routes.filter((r) => r.callers !== 'full' && r.callers !== 'role' && r.callers !== 'agent').map(formatRoute);
    expect(undeclared).toEqual([]);
  });

  it('keeps every route that creates, changes or deletes closed to role tokens', () => {
    // Act
    const opened = routes.filter((r) => CHANGING_HANDLER.test(r.handler) && r.callers !== 'full').map(formatRoute);
    // Assess
    expect(opened).toEqual([]);
  });

  it('opens only the chat routes to agent-scoped tokens', () => {
    // Act: embed visitors and phone calls hold these; anything else they reach widens a browser credential.
    const opened = routes.filter((r) => r.callers === 'agent').map((r) => `${r.method} ${r.host} ${r.path}`);
    // Assess
    expect(opened.sort()).toEqual(['GET stream /agent/{agentId}/chat', 'POST base /agent/{agentId}/chat', 'POST stream /agent/{agentId}/chat']);
  });

  it('opens the run and read routes role and run tokens depend on', () => {
    // Prepare: agents' run tokens call MCP endpoints and chat; role tokens read their account.
    const roleRoutes = new Set(routes.filter((r) => r.callers !== 'full').map((r) => `${r.method} ${r.host} ${r.path}`));
    // Assess
    for (const expected of [
      'POST mcp /mcp/{serverId}',
      'POST mcp /mcp/s/{owner}/{slug}',
      'POST stream /agent/{agentId}/chat',
      'POST base /action/{actionId}',
      'GET base /user/info',
    ]) {
      expect(roleRoutes.has(expected), expected).toBe(true);
    }
  });
});

describe('assertCallerAdmitted', () => {
  const anonymous: Actor = { kind: 'anonymous' };

  it.each([
    ['a role token', user('role-token', 'role')],
    ['a run token', user('run-token', 'role')],
  ])('refuses %s on a full route with ACCESS_DENIED', (_label, actor) => {
    // Act
    const act = () => assertCallerAdmitted('full', actor);
    // Assess
    expect(act).toThrow(AccessDeniedError);
    expect(act).toThrow(/Role tokens can run and read/);
  });

  it.each([
    ['a user token on a full route', 'full', user('user-token', 'full')],
    ['a secret key on a full route', 'full', user('secret-key', 'full')],
    ['an identity-provider session on a full route', 'full', user('identity-provider', 'full')],
    ['a role token on a role route', 'role', user('role-token', 'role')],
    ['a run token on a role route', 'role', user('run-token', 'role')],
    ['an anonymous caller on a full route (the auth mode decides)', 'full', anonymous],
  ] as const)('admits %s', (_label, callers, actor) => {
    // Assess
    expect(() => assertCallerAdmitted(callers, actor)).not.toThrow();
  });
});
