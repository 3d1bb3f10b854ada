import type { Host, HttpMethod, RouteSpec, ServiceSpec } from './types.ts';

/**
 * Which SPEC part 4 endpoints the manifest serves. Pure functions over the SPEC's markdown and the
 * route list, shared by `npm run spec:coverage` and the unit tests.
 */

/** A method as the SPEC names it: `ANY` is served by every method, `WEBSOCKET` by any route at the address. */
export type SpecMethod = HttpMethod | 'ANY' | 'WEBSOCKET';

/** One endpoint of SPEC part 4: a route serving any of `methods` at `host` + `path` implements it. */
export interface SpecEndpoint {
  /** `4.1 Agents`; sub-headings such as `### Chat` stay in their section. */
  readonly section: string;
  readonly methods: readonly SpecMethod[];
  readonly host: Host;
  /** Path template as the SPEC writes it; parameter names may differ from the manifest's. */
  readonly path: string;
  /** 1-based line of the table row, so a report can point at the SPEC. */
  readonly line: number;
}

export interface CoverageEntry {
  readonly endpoint: SpecEndpoint;
  /** Manifest routes that serve the endpoint. */
  readonly routes: readonly RouteSpec[];
  /** The service owning the endpoint's host whole (the voice bridge), which serves every path under it. */
  readonly service?: ServiceSpec;
}

/** Whether a route or the host's service serves the entry's endpoint. */
export function isServed(entry: CoverageEntry): boolean {
  return entry.routes.length > 0 || entry.service !== undefined;
}

export interface SectionCoverage {
  readonly section: string;
  readonly entries: readonly CoverageEntry[];
  readonly implemented: number;
}

const HOST_BY_PLACEHOLDER: Readonly<Record<string, Host>> = {
  base_url: 'base',
  stream_url: 'stream',
  mcp_url: 'mcp',
  voice_url: 'voice',
  cdn_url: 'cdn',
  site_url: 'site',
  code_url: 'code',
};

const SPEC_METHODS: ReadonlySet<string> = new Set<SpecMethod>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY', 'WEBSOCKET']);

/**
 * Routes the platform serves beyond the SPEC: health, discovery and the API reference for operators
 * and clients, the operator API the admin CLI uses, and key removal. Anything else in the manifest must be in SPEC part 4.
 */
/** Without `method`, every method at the path is an extra. */
const PLATFORM_EXTRAS: readonly { readonly host: Host; readonly path: string; readonly prefix: boolean; readonly method?: HttpMethod }[] = [
  { host: 'base', path: '/health', prefix: false },
  { host: 'base', path: '/.well-known/platform.json', prefix: false },
  // The API reference: the OpenAPI document and the page rendering it (with the viewer's files).
  { host: 'base', path: '/openapi.json', prefix: false },
  { host: 'base', path: '/docs', prefix: false },
  { host: 'base', path: '/docs/', prefix: true },
  { host: 'base', path: '/admin/', prefix: true },
  // The SPEC's second name for GET /logs (4.13: "also listed as /logs/user"), in a cell rather than a row.
  { host: 'base', path: '/logs/user', prefix: false },
  // The SPEC's second spelling of the conversation path (4.1, in a cell rather than a row).
  { host: 'base', path: '/agent/{agentId}/conversations/{conversationId}', prefix: false },
  // The agent source checker without saving (issue 39): the console marks problems at their lines as the user types.
  { host: 'base', path: '/agent/check', prefix: false },
  // Key removal: the SPEC lists store, list and check; owners also need to delete a key.
  { host: 'base', path: '/keys/{serviceName}', prefix: false },
  // OAuth redirect target: the SPEC lists only the start (authorize); the provider must send the code somewhere.
  { host: 'base', path: '/oauth/callback/{provider}', prefix: false },
  // "Run now" of a cron job (issue 16): the same run as a scheduled one, for users and tests.
  { host: 'base', path: '/cron/{cronId}/run', prefix: false },
  // The platform's own MCP server (issue 29): the caller's knowledge, actions, skills and hosted MCP servers as tools.
  { host: 'mcp', path: '/mcp/platform', prefix: false },
  // Channels' inbound URLs (issue 31): Meta verifies (GET) and delivers (POST) on one Callback URL,
  // so each of the SPEC's two inbound paths takes the method the SPEC lists only on the other.
  { host: 'base', path: '/channels/inbound/{channelId}/{platform}', prefix: false, method: 'GET' },
  { host: 'base', path: '/channels/inbound/{channelId}/whatsapp', prefix: false, method: 'POST' },
  // Users' sites: SPEC 4.11 says "Files are public at {site_url}/{alias}/{path}" in prose, not in a row.
  { host: 'site', path: '/{site+}', prefix: false },
  // Stripe's webhook (issue 35): the subscriptions the SPEC lists are paid through Stripe, which reports here.
  { host: 'base', path: '/stripe/webhook', prefix: false },
];

/** Where the method and the address sit in an endpoint table; the same index when one cell holds both. */
interface Columns {
  readonly method: number;
  readonly address: number;
}

/**
 * Reads the endpoint tables of SPEC part 4 (`# 4.` up to the next `# ` heading). A table counts when
 * its header names a method column (`Method`, `Kind`) and an address column (`Path`, `Address`),
 * or one `Method and address` column; other tables (script attributes, placeholders) are skipped.
 * A row that cannot be read throws, so a SPEC edit never drops endpoints silently.
 */
export function parseSpecEndpoints(markdown: string): SpecEndpoint[] {
  const endpoints: SpecEndpoint[] = [];
  let inPart4 = false;
  let section = '4';
  // undefined: not inside a table; null: inside a table that lists no endpoints.
  let columns: Columns | null | undefined;

  markdown.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    const lineNumber = index + 1;
    if (/^# /.test(line)) {
      inPart4 = /^# 4\.(\s|$)/.test(line);
      columns = undefined;
      return;
    }
    if (!inPart4) return;
    const heading = /^## (4\.\d+)\s+(.+)$/.exec(line);
    if (heading) {
      section = `${heading[1]} ${heading[2]!.trim()}`;
      columns = undefined;
      return;
    }
    if (!line.startsWith('|')) {
      columns = undefined;
      return;
    }
    const cells = splitRow(line);
    if (columns === undefined) {
      columns = locateColumns(cells);
      return;
    }
    if (columns === null || isSeparatorRow(cells)) return;
    endpoints.push(...readRow(cells, columns, section, lineNumber));
  });
  return endpoints;
}

function splitRow(line: string): string[] {
  const inner = line.replace(/^\|/, '').replace(/\|$/, '');
  return inner.split('|').map((cell) => cell.trim());
}

function isSeparatorRow(cells: readonly string[]): boolean {
  return cells.every((cell) => /^:?-+:?$/.test(cell));
}

function locateColumns(header: readonly string[]): Columns | null {
  const names = header.map((cell) => cell.toLowerCase());
  const combined = names.indexOf('method and address');
  if (combined >= 0) return { method: combined, address: combined };
  const method = names.findIndex((name) => name === 'method' || name === 'kind');
  const address = names.findIndex((name) => name === 'path' || name === 'address');
  return method >= 0 && address >= 0 ? { method, address } : null;
}

/**
 * One row: with one address, one endpoint per method (`PUT or POST /agent/update` is two
 * endpoints); with several addresses, one endpoint per address served by any of the row's methods
 * (`POST, DELETE, GET /stars, /stars/check` names operations, not a method for every path).
 */
function readRow(cells: readonly string[], columns: Columns, section: string, line: number): SpecEndpoint[] {
  let methodText = cells[columns.method] ?? '';
  let addressText = cells[columns.address] ?? '';
  if (columns.method === columns.address) {
    const split = /^(\S+)\s+(.+)$/.exec(methodText);
    if (!split) throw new Error(`SPEC line ${line}: expected "METHOD address" in "${methodText}"`);
    methodText = split[1]!;
    addressText = split[2]!;
  }
  const methods = readMethods(methodText, line);
  const addresses = readAddresses(addressText, line);
  if (addresses.length === 1) return methods.map((method) => ({ section, methods: [method], ...addresses[0]!, line }));
  return addresses.map((address) => ({ section, methods, ...address, line }));
}

function readMethods(text: string, line: number): SpecMethod[] {
  const words = text.split(/\s*,\s*|\s+or\s+|\s+and\s+/i).filter((word) => word.length > 0);
  if (words.length === 0) throw new Error(`SPEC line ${line}: no method given`);
  return words.map((word) => {
    const method = word.toUpperCase();
    if (!SPEC_METHODS.has(method)) throw new Error(`SPEC line ${line}: unknown method "${word}"`);
    return method as SpecMethod;
  });
}

/** Addresses of one cell, without notes in parentheses, query strings or schemes; duplicates once. */
function readAddresses(text: string, line: number): { host: Host; path: string }[] {
  const seen = new Map<string, { host: Host; path: string }>();
  for (const part of text.replace(/`/g, '').split(/\s*,\s*|\s+and\s+/)) {
    const address = part
      .replace(/\s*\([^)]*\)\s*$/, '')
      .replace(/\?.*$/, '')
      .replace(/^[a-z]+:\/\//, '')
      .trim();
    if (address.length === 0) continue;
    const located = locateAddress(address, line);
    seen.set(`${located.host} ${located.path}`, located);
  }
  if (seen.size === 0) throw new Error(`SPEC line ${line}: no address given`);
  return [...seen.values()];
}

function locateAddress(address: string, line: number): { host: Host; path: string } {
  let host: Host = 'base';
  let path = address;
  const placeholder = /^\{(\w+)\}(.*)$/.exec(address);
  if (placeholder) {
    const mapped = HOST_BY_PLACEHOLDER[placeholder[1]!];
    if (mapped === undefined) throw new Error(`SPEC line ${line}: unknown host placeholder {${placeholder[1]}}`);
    host = mapped;
    path = placeholder[2] || '/';
  }
  if (!/^\/\S*$/.test(path)) throw new Error(`SPEC line ${line}: cannot read the address "${address}"`);
  return { host, path };
}

/** The template with parameter names erased: `/user/token/{id}` and `/user/token/{tokenId}` are one route. */
export function normaliseTemplate(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}').replace(/(.)\/+$/, '$1');
}

export function routeServesEndpoint(route: Pick<RouteSpec, 'method' | 'host' | 'path'>, endpoint: SpecEndpoint): boolean {
  if (route.host !== endpoint.host || normaliseTemplate(route.path) !== normaliseTemplate(endpoint.path)) return false;
  return endpoint.methods.some((method) => method === 'ANY' || method === 'WEBSOCKET' || method === route.method);
}

export function checkCoverage(endpoints: readonly SpecEndpoint[], routes: readonly RouteSpec[], services: readonly ServiceSpec[] = []): CoverageEntry[] {
  return endpoints.map((endpoint) => {
    const service = services.find((s) => s.host === endpoint.host);
    return { endpoint, routes: routes.filter((route) => routeServesEndpoint(route, endpoint)), ...(service !== undefined ? { service } : {}) };
  });
}

/** Entries by SPEC section, in SPEC order. */
export function groupBySection(entries: readonly CoverageEntry[]): SectionCoverage[] {
  const bySection = new Map<string, CoverageEntry[]>();
  for (const entry of entries) {
    const list = bySection.get(entry.endpoint.section) ?? [];
    list.push(entry);
    bySection.set(entry.endpoint.section, list);
  }
  return [...bySection].map(([section, list]) => ({ section, entries: list, implemented: list.filter(isServed).length }));
}

export function isPlatformExtra(route: Pick<RouteSpec, 'host' | 'path' | 'method'>): boolean {
  return PLATFORM_EXTRAS.some(
    (extra) =>
      extra.host === route.host &&
      (extra.method === undefined || extra.method === route.method) &&
      (extra.prefix ? route.path.startsWith(extra.path) : route.path === extra.path),
  );
}

/** Manifest routes that are neither in SPEC part 4 nor platform extras: endpoints nobody specified. */
export function findUnspecifiedRoutes(endpoints: readonly SpecEndpoint[], routes: readonly RouteSpec[]): RouteSpec[] {
  return routes.filter((route) => !isPlatformExtra(route) && !endpoints.some((endpoint) => routeServesEndpoint(route, endpoint)));
}

/** `PUT /agent/update`, `POST, DELETE or GET /stars/check`, `WebSocket {voice_url}/ws/{agentId}`. */
export function formatEndpoint(endpoint: SpecEndpoint): string {
  const names = endpoint.methods.map((method) => (method === 'WEBSOCKET' ? 'WebSocket' : method));
  const methods = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names.join('');
  return `${methods} ${formatAddress(endpoint.host, endpoint.path)}`;
}

export function formatRoute(route: Pick<RouteSpec, 'method' | 'host' | 'path'>): string {
  return `${route.method} ${formatAddress(route.host, route.path)}`;
}

function formatAddress(host: Host, path: string): string {
  return host === 'base' ? path : `{${host}_url}${path}`;
}

/** Where the README's status table sits; `npm run spec:coverage -- --readme` rewrites what is between. */
export const README_STATUS_MARKERS = { start: '<!-- spec-coverage:start -->', end: '<!-- spec-coverage:end -->' } as const;

/**
 * The per-area status as a markdown table (`npm run spec:coverage -- --markdown`), the one the
 * README shows: a unit test compares the two, so the README cannot claim an area that is not served.
 */
export function statusTable(groups: readonly SectionCoverage[]): string {
  const status = (group: SectionCoverage) =>
    group.implemented === group.entries.length
      ? 'implemented'
      : group.implemented === 0
        ? 'not yet'
        : `partly (${group.implemented} of ${group.entries.length})`;
  const total = groups.reduce((sum, group) => sum + group.entries.length, 0);
  const implemented = groups.reduce((sum, group) => sum + group.implemented, 0);
  return [
    '| SPEC area | Endpoints | Status |',
    '| --- | --- | --- |',
    ...groups.map((group) => `| ${group.section} | ${group.entries.length} | ${status(group)} |`),
    `| All | ${total} | ${implemented} implemented |`,
  ].join('\n');
}

/** `markdown` with the text between the README markers replaced by `table`; throws when the markers are missing. */
export function withStatusTable(markdown: string, table: string): string {
  const start = markdown.indexOf(README_STATUS_MARKERS.start);
  const end = markdown.indexOf(README_STATUS_MARKERS.end);
  if (start < 0 || end < start) throw new Error(`the README has no ${README_STATUS_MARKERS.start} ... ${README_STATUS_MARKERS.end} section`);
  return `${markdown.slice(0, start + README_STATUS_MARKERS.start.length)}\n${table}\n${markdown.slice(end)}`;
}
