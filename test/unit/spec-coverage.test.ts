import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routes } from '../../lib/manifest/index.ts';
import {
  checkCoverage,
  findUnspecifiedRoutes,
  formatEndpoint,
  formatRoute,
  groupBySection,
  isPlatformExtra,
  normaliseTemplate,
  parseSpecEndpoints,
  type SpecEndpoint,
} from '../../lib/manifest/spec-coverage.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';

const spec = readFileSync(new URL('../../docs/SPEC.md', import.meta.url), 'utf8');
const endpoints = parseSpecEndpoints(spec);

/** The endpoints at one address, reduced to section and methods. */
function endpointsAt(host: SpecEndpoint['host'], path: string) {
  return endpoints.filter((e) => e.host === host && e.path === path).map((e) => ({ section: e.section, methods: e.methods }));
}

function fakeRoute(method: RouteSpec['method'], path: string, host: RouteSpec['host'] = 'base'): RouteSpec {
  return {
    id: `test.${method}-${path}`,
    method,
    path,
    host,
    area: 'test',
    handler: 'h',
    auth: 'public',
    callers: 'role',
    mode: 'buffered',
    style: 'B',
    timeoutSec: 29,
    maxBodyBytes: 1024,
  };
}

describe('parseSpecEndpoints on docs/SPEC.md', () => {
  it('reads every section of part 4 and nothing outside it', () => {
    // Act
    const sections = groupBySection(checkCoverage(endpoints, [])).map((g) => g.section);
    // Assess
    expect(sections).toEqual([
      '4.1 Agents',
      '4.2 Voice agents',
      '4.3 Actions',
      '4.4 MCP servers',
      '4.5 Skills',
      '4.6 Knowledge storage',
      '4.7 Search',
      '4.8 Cron jobs',
      '4.9 Channels',
      '4.10 Embed widget',
      '4.11 Website hosting',
      '4.12 Code server',
      '4.13 Keys, OAuth, logs',
      '4.14 Catalogue endpoints with method and path only',
    ]);
    // Part 8 mentions `POST /cron` in a limits table; only part 4's rows count.
    expect(endpoints.filter((e) => e.path === '/cron' && e.methods.includes('POST'))).toHaveLength(1);
  });

  it('finds a sensible number of endpoints, each with a path template', () => {
    // Assess
    expect(endpoints.length).toBeGreaterThan(130);
    expect(endpoints.length).toBeLessThan(170);
    for (const e of endpoints) expect(e.path, formatEndpoint(e)).toMatch(/^\/[\w\-./{}]*$/);
  });

  it('splits a single-path row with several methods into one endpoint per method', () => {
    // Assess
    expect(endpointsAt('base', '/agent/update')).toEqual([
      { section: '4.1 Agents', methods: ['PUT'] },
      { section: '4.1 Agents', methods: ['POST'] },
    ]);
    expect(endpointsAt('base', '/user/alias').map((e) => e.methods)).toEqual([['POST'], ['PUT']]);
    expect(endpointsAt('base', '/knowledge/delete').map((e) => e.methods)).toEqual([['ANY']]);
  });

  it('splits a multi-path row into one endpoint per path, served by any of its methods', () => {
    // Assess
    expect(endpointsAt('base', '/user/token/list').map((e) => e.methods)).toEqual([['GET']]);
    expect(endpointsAt('base', '/user/token/{tokenId}').map((e) => e.methods)).toEqual([['GET']]);
    expect(endpointsAt('base', '/user/token/{tokenId}/regenerate').map((e) => e.methods)).toEqual([['POST']]);
    expect(endpointsAt('mcp', '/mcp/{serverId}').map((e) => e.methods)).toEqual([['POST', 'GET']]);
    expect(endpointsAt('mcp', '/mcp/s/{owner}/{slug}').map((e) => e.methods)).toEqual([['POST', 'GET']]);
    // `/stars (list)` is the same path as `/stars`: one endpoint, the note dropped.
    const stars = endpoints.filter((e) => e.path.startsWith('/stars'));
    expect(stars.map((e) => e.path)).toEqual(['/stars', '/stars/check', '/stars/count/{resourceId}']);
    for (const e of stars) expect(e.methods).toEqual(['POST', 'DELETE', 'GET']);
  });

  it('reads the method from the address cell of the chat table and maps host placeholders', () => {
    // Assess
    expect(endpointsAt('stream', '/agent/{agentId}/chat').map((e) => e.methods)).toEqual([['POST'], ['GET']]);
    expect(endpointsAt('base', '/agent/{agentId}/chat')).toEqual([{ section: '4.1 Agents', methods: ['POST'] }]);
    expect(endpointsAt('voice', '/ws/{agentId}')).toEqual([{ section: '4.2 Voice agents', methods: ['WEBSOCKET'] }]);
    expect(endpointsAt('voice', '/ws/twilio/{agentId}').map((e) => e.methods)).toEqual([['WEBSOCKET']]);
    expect(endpointsAt('voice', '/health').map((e) => e.methods)).toEqual([['GET']]);
    expect(endpointsAt('base', '/skills/s/{owner}/{slug}/SKILL.md').map((e) => e.methods)).toEqual([['GET']]);
  });

  it('drops the query string of an address', () => {
    // Assess
    expect(endpointsAt('base', '/embed/config').map((e) => e.methods)).toEqual([['GET']]);
    expect(endpoints.some((e) => e.path.includes('?'))).toBe(false);
  });

  it('records the SPEC line of each row', () => {
    // Prepare
    const lines = spec.split('\n');
    // Act
    const create = endpoints.find((e) => e.path === '/agent/create');
    // Assess
    expect(lines[create!.line - 1]).toMatch(/^\| POST \| \/agent\/create \|/);
  });
});

describe('parseSpecEndpoints on malformed tables', () => {
  const table = (row: string) => `# 4. Endpoints\n\n## 4.1 Things\n\n| Method | Path | Notes |\n|---|---|---|\n${row}\n\n# 5. Next\n`;

  it('refuses an unknown method instead of dropping the row', () => {
    expect(() => parseSpecEndpoints(table('| FETCH | /things | |'))).toThrow(/line 7: unknown method "FETCH"/);
  });

  it('refuses an unknown host placeholder', () => {
    expect(() => parseSpecEndpoints(table('| GET | {other_url}/things | |'))).toThrow(/unknown host placeholder \{other_url\}/);
  });

  it('refuses an address that is not a path', () => {
    expect(() => parseSpecEndpoints(table('| GET | things | |'))).toThrow(/cannot read the address "things"/);
  });

  it('skips tables without a method and an address column', () => {
    const markdown = '# 4. Endpoints\n\n| Attribute | Required |\n|---|---|\n| data-token | yes |\n';
    expect(parseSpecEndpoints(markdown)).toEqual([]);
  });
});

describe('checkCoverage', () => {
  const entries = checkCoverage(endpoints, routes);
  const statusOf = (label: string) => {
    const matching = entries.filter((entry) => formatEndpoint(entry.endpoint) === label);
    expect(matching, label).toHaveLength(1);
    return matching[0]!.routes.length > 0 ? 'implemented' : 'missing';
  };

  it('reports the manifest routes that exist as implemented', () => {
    // Assess
    expect(statusOf('GET /user/info')).toBe('implemented');
    expect(statusOf('POST /user/token/create')).toBe('implemented');
    expect(statusOf('GET /user/token/{tokenId}')).toBe('implemented');
    expect(statusOf('PUT /user/alias')).toBe('implemented');
  });

  it('reports an endpoint without a route as missing', () => {
    // Prepare: the real manifest without its GET /user/info route, so the test does not go stale as areas land
    const without = routes.filter((r) => !(r.method === 'GET' && r.path === '/user/info'));
    // Act
    const entry = checkCoverage(endpoints, without).find((e) => formatEndpoint(e.endpoint) === 'GET /user/info');
    // Assess
    expect(entry?.routes).toEqual([]);
  });

  it('compares templates with parameter names erased, and honours ANY, WebSocket and host', () => {
    // Prepare
    const probe = (route: RouteSpec, label: string) =>
      checkCoverage(endpoints, [route]).find((entry) => formatEndpoint(entry.endpoint) === label)!.routes.length;
    // Assess
    expect(normaliseTemplate('/user/token/{id}/')).toBe(normaliseTemplate('/user/token/{tokenId}'));
    expect(probe(fakeRoute('GET', '/user/token/{id}'), 'GET /user/token/{tokenId}')).toBe(1);
    expect(probe(fakeRoute('DELETE', '/knowledge/delete'), 'ANY /knowledge/delete')).toBe(1);
    expect(probe(fakeRoute('GET', '/ws/{id}', 'voice'), 'WebSocket {voice_url}/ws/{agentId}')).toBe(1);
    expect(probe(fakeRoute('GET', '/mcp/{id}', 'mcp'), 'POST or GET {mcp_url}/mcp/{serverId}')).toBe(1);
    expect(probe(fakeRoute('PUT', '/mcp/{id}', 'mcp'), 'POST or GET {mcp_url}/mcp/{serverId}')).toBe(0);
    expect(probe(fakeRoute('POST', '/agent/{id}/chat'), 'POST {stream_url}/agent/{agentId}/chat')).toBe(0);
  });
});

describe('manifest routes against the SPEC', () => {
  it('lists only SPEC endpoints and the platform extras (/health, /.well-known/platform.json, /admin/...)', () => {
    // Act
    const unspecified = findUnspecifiedRoutes(endpoints, routes).map(formatRoute);
    // Assess: a route here was invented; add it to SPEC.md or to the extras in spec-coverage.ts on purpose.
    expect(unspecified).toEqual([]);
  });

  it('counts health, discovery and the operator API as extras, and nothing from the SPEC', () => {
    // Assess
    expect(routes.filter(isPlatformExtra).map(formatRoute)).toEqual(
      expect.arrayContaining(['GET /health', 'GET /.well-known/platform.json', 'GET /openapi.json', 'GET /docs', 'GET /docs/{asset}', 'POST /admin/users']),
    );
    expect(
      findUnspecifiedRoutes(endpoints, [fakeRoute('PATCH', '/user/info'), fakeRoute('GET', '/admin/users'), fakeRoute('GET', '/health', 'voice')]).map(
        formatRoute,
      ),
    ).toEqual(['PATCH /user/info']);
  });
});
