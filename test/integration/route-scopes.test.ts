import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_HOST_PREFIX } from '../../lib/local/server.ts';
import { routes } from '../../lib/manifest/index.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { formatRoute } from '../../lib/manifest/spec-coverage.ts';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

/** The pipeline's refusal, as opposed to a service's own `requireFullAccess` or an ownership check. */
const PIPELINE_REFUSAL = /Role tokens can run and read/;

/** A local URL path for the route: its host's prefix, parameters filled with a value no literal segment uses. */
function localPath(route: RouteSpec): string {
  return LOCAL_HOST_PREFIX[route.host] + route.path.replace(/\{\w+\}/g, 'placeholder-1');
}

function call(platform: TestPlatform, route: RouteSpec, token: string): Promise<ApiResponse> {
  // GET cannot carry a body; every other method gets an empty JSON object, which the rule must refuse before validation.
  return platform.api(route.method, localPath(route), { token, ...(route.method === 'GET' ? {} : { body: {} }) });
}

/** Envelope A nests the error (`{error: {code, message}}`), envelope B flattens it (`{error, code}`). */
function errorOf(res: ApiResponse): { code: unknown; message: unknown } {
  const body = res.body as { code?: unknown; error?: unknown };
  if (typeof body.error === 'object' && body.error !== null) return body.error as { code: unknown; message: unknown };
  return { code: body.code, message: body.error };
}

const fullRoutes = routes.filter((r) => r.callers === 'full' && r.auth !== 'public');
const roleRoutes = routes.filter((r) => r.callers === 'role' && r.auth !== 'public');
const notForAgentScoped = routes.filter((r) => r.callers !== 'agent' && r.auth !== 'public');

describe('route callers: what role and run tokens may call', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  const scoped: Record<'role token' | 'run token', string> = { 'role token': '', 'run token': '' };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'scope-owner', credits: 10 });
    const created = await platform.api('POST', '/role-token/create', { token: owner.token, body: { name: 'ci-bot', keys: [] } });
    if (created.status !== 200) throw new Error(`creating a role token failed: ${created.status} ${created.text}`);
    scoped['role token'] = created.body.data.token as string;
    // What an agent's run presents when it calls back into the platform.
    scoped['run token'] = await platform.running.ports.runTokens.mint({ userId: owner.userId, keys: null }, 60_000);
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('has full routes to walk', () => {
    // Assess: guards the walks below against an empty list passing vacuously.
    expect(fullRoutes.map(formatRoute)).toEqual(
      expect.arrayContaining(['POST /agent/create', 'PUT /mcp-admin/update', 'POST /keys/store', 'DELETE /user/account']),
    );
  });

  describe.each(['role token', 'run token'] as const)('with a %s', (kind) => {
    it.each(fullRoutes.map((r) => [formatRoute(r), r] as const))('refuses %s with 403 ACCESS_DENIED', async (_label, route) => {
      // Act
      const res = await call(platform, route, scoped[kind]);
      // Assess
      expect(res.status, res.text).toBe(403);
      const error = errorOf(res);
      // The website shape carries the message alone (SPEC part 7, shape 3).
      expect(error.code).toBe(route.style === 'website' ? undefined : 'ACCESS_DENIED');
      // Operator routes refuse every non-operator earlier, in the auth step, with their own message.
      if (route.auth !== 'admin') expect(error.message).toMatch(PIPELINE_REFUSAL);
    });

    it.each(roleRoutes.map((r) => [formatRoute(r), r] as const))('lets %s through to its handler', async (_label, route) => {
      // Act: placeholder ids, so the handler answers 400 or 404 (or 200 for the caller's own reads).
      const res = await call(platform, route, scoped[kind]);
      // Assess
      expect(String(errorOf(res).message ?? '')).not.toMatch(PIPELINE_REFUSAL);
      expect(res.status, res.text).not.toBe(403);
    });

    it('reads the account, its agents and its logs', async () => {
      // Act
      const info = await platform.api('GET', '/user/info', { token: scoped[kind] });
      const agents = await platform.api('GET', '/agent/list', { token: scoped[kind] });
      const logs = await platform.api('GET', '/logs', { token: scoped[kind] });
      const key = await platform.api('GET', '/keys/check/openai', { token: scoped[kind] });
      // Assess
      expect(info.status, info.text).toBe(200);
      expect(info.body.data.userId).toBe(owner.userId);
      expect(agents.status, agents.text).toBe(200);
      expect(agents.body.data.agents).toEqual([]);
      expect(logs.status, logs.text).toBe(200);
      expect(key.body.data).toEqual({ serviceName: 'openai', exists: false });
    });
  });

  describe('with an agent-scoped token (an embed visitor, a phone call)', () => {
    it.each(notForAgentScoped.map((r) => [formatRoute(r), r] as const))('refuses %s with 403 ACCESS_DENIED', async (_label, route) => {
      // Prepare
      const token = await platform.running.ports.runTokens.mint({ userId: owner.userId, keys: null, agents: ['placeholder-1'] }, 60_000);
      // Act
      const res = await call(platform, route, token);
      // Assess
      expect(res.status, res.text).toBe(403);
      // MCP routes answer in JSON-RPC's error shape, with its numeric codes.
      if (route.errors !== 'json-rpc') expect(errorOf(res).code).toBe(route.style === 'website' ? undefined : 'ACCESS_DENIED');
      if (route.auth !== 'admin') expect(String(errorOf(res).message)).toMatch(/only chat with the agents it was issued for/);
    });
  });

  it('still lets a full-scope token through a full route', async () => {
    // Act
    const tokens = await platform.api('GET', '/user/token/list', { token: owner.token });
    const emptyCreate = await platform.api('POST', '/agent/create', { token: owner.token, body: {} });
    // Assess: the listing answers, and the create gets as far as validating its body.
    expect(tokens.status, tokens.text).toBe(200);
    expect(emptyCreate.status, emptyCreate.text).toBe(400);
    expect(errorOf(emptyCreate).code).toBe('INVALID_PARAMETERS');
  });
});
