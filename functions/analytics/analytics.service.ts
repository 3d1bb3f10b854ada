import type { ActionStore } from '../actions/action.store.ts';
import type { AgentStore } from '../agents/agent.store.ts';
import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { roundCredits } from '../core/credits.ts';
import { ValidationError } from '../core/errors.ts';
import type { McpServerStore } from '../mcp/mcp.store.ts';
import {
  MAX_POINTS,
  type Figures,
  type Interval,
  type OverviewQuery,
  type ResourceFigures,
  type ResourcesQuery,
  type TimeseriesQuery,
} from './analytics.schema.ts';
import { DAY_MS, HOUR_MS, dayOf, daySlot, hourSlot, percentileOf } from '../core/usage-counters.ts';
import type { CounterItem, UsageStatsStore } from '../core/usage-counters.store.ts';

export interface AnalyticsPorts {
  readonly usageStats: UsageStatsStore;
  readonly agents: Pick<AgentStore, 'get' | 'listByOwner'>;
  readonly actions: Pick<ActionStore, 'get' | 'listByOwner'>;
  readonly mcpServers: Pick<McpServerStore, 'get' | 'listByOwner'>;
  readonly clock: Clock;
}

/** The types every overview names, with zeros when unused; any other type appears once it has runs. */
const SHOWN_TYPES = ['agent', 'action', 'mcp', 'voice', 'cron', 'channel'] as const;
const TOP_RESOURCES = 5;
/** An author's public resources of each kind looked at for others' calls (the newest ones). */
const PUBLIC_RESOURCES_PER_KIND = 100;
/** Resource counter reads in flight at once for one request. */
const READS_IN_FLIGHT = 16;

const num = (item: Readonly<Record<string, unknown>>, field: string): number => {
  const value = item[field];
  return typeof value === 'number' ? value : 0;
};

/** A window of whole UTC days ending today: the slots that hold it and its bounds. */
function dayWindow(now: number, days: number) {
  const start = Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  const fromDay = dayOf(start);
  const toDay = dayOf(now);
  return { from: new Date(start).toISOString(), to: new Date(now).toISOString(), fromDay, toDay };
}

interface ResourceSum extends Figures {
  readonly resourceId: string;
  readonly resourceType: string;
  readonly histogram: Map<number, number>;
}

/** The caller's per-resource day items of the window, summed by resource. */
async function ownResourceSums(userId: string, fromDay: string, toDay: string, ports: AnalyticsPorts): Promise<Map<string, ResourceSum>> {
  const items = await ports.usageStats.userSlots(userId, `r#${fromDay}`, `r#${toDay}#\uffff`);
  const sums = new Map<
    string,
    { resourceId: string; resourceType: string; requests: number; errors: number; creditsSpent: number; histogram: Map<number, number> }
  >();
  for (const item of items) {
    const resourceId = String(item['resourceId']);
    const resourceType = String(item['resourceType']);
    const key = `${resourceType}#${resourceId}`;
    let sum = sums.get(key);
    if (sum === undefined) sums.set(key, (sum = { resourceId, resourceType, requests: 0, errors: 0, creditsSpent: 0, histogram: new Map() }));
    sum.requests += num(item, 'n');
    sum.errors += num(item, 'e');
    sum.creditsSpent += num(item, 'c');
    for (const [field, value] of Object.entries(item)) {
      const bucket = /^h(\d+)$/.exec(field)?.[1];
      if (bucket !== undefined && typeof value === 'number') sum.histogram.set(Number(bucket), (sum.histogram.get(Number(bucket)) ?? 0) + value);
    }
  }
  return sums;
}

/** The caller's public agents, actions and MCP servers (the newest PUBLIC_RESOURCES_PER_KIND of each). */
async function publicResourcesOf(userId: string, ports: AnalyticsPorts): Promise<{ resourceId: string; resourceType: string; name: string }[]> {
  const [agents, actions, servers] = await Promise.all([
    ports.agents.listByOwner(userId, { status: 'active', visibility: 'public' }, { limit: PUBLIC_RESOURCES_PER_KIND }),
    ports.actions.listByOwner(userId, { visibility: 'public' }, PUBLIC_RESOURCES_PER_KIND, undefined),
    ports.mcpServers.listByOwner(userId, { visibility: 'public' }, { limit: PUBLIC_RESOURCES_PER_KIND }),
  ]);
  return [
    ...agents.items.map((a) => ({ resourceId: a.agentId, resourceType: 'agent', name: a.agentName })),
    ...actions.items.map((a) => ({ resourceId: a.actionId, resourceType: 'action', name: a.actionName })),
    ...servers.items.map((s) => ({ resourceId: s.serverId, resourceType: 'mcp', name: s.serverName })),
  ];
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Calls others made to the caller's public resources in the window: each resource's day counters
 * (every payer) minus the caller's own runs of it. Counts only: nothing of who called.
 */
async function callsByOthers(
  userId: string,
  window: { fromDay: string; toDay: string },
  own: ReadonlyMap<string, ResourceSum>,
  ports: AnalyticsPorts,
): Promise<{ resourceId: string; resourceType: string; name: string; requests: number; errors: number }[]> {
  const resources = await publicResourcesOf(userId, ports);
  return mapBounded(resources, READS_IN_FLIGHT, async (resource) => {
    const items = await ports.usageStats.resourceSlots(resource.resourceId, `d#${window.fromDay}`, `d#${window.toDay}`);
    const mine = own.get(`${resource.resourceType}#${resource.resourceId}`);
    const total = { requests: items.reduce((sum, item) => sum + num(item, 'n'), 0), errors: items.reduce((sum, item) => sum + num(item, 'e'), 0) };
    return { ...resource, requests: total.requests - (mine?.requests ?? 0), errors: total.errors - (mine?.errors ?? 0) };
  });
}

/** A resource's name as the caller may see it: theirs or public; null otherwise or when gone. */
async function nameOf(userId: string, resourceType: string, resourceId: string, ports: AnalyticsPorts): Promise<string | null> {
  const visible = (record: { ownerId: string; visibility: string } | null) => record !== null && (record.ownerId === userId || record.visibility === 'public');
  if (resourceType === 'agent' || resourceType === 'voice') {
    const agent = await ports.agents.get(resourceId);
    return agent !== null && visible(agent) ? agent.agentName : null;
  }
  if (resourceType === 'action') {
    const action = await ports.actions.get(resourceId);
    return action !== null && visible(action) ? action.actionName : null;
  }
  if (resourceType === 'mcp') {
    const server = await ports.mcpServers.get(resourceId);
    return server !== null && visible(server) ? server.serverName : null;
  }
  return null;
}

const rate = (errors: number, requests: number) => (requests === 0 ? 0 : Math.round((errors / requests) * 10_000) / 10_000);

/** GET /analytics/overview: the caller's runs over the last `days` UTC days (today included). */
export async function getOverview(actor: UserActor, query: OverviewQuery, ports: AnalyticsPorts) {
  const window = dayWindow(ports.clock.now(), query.days);
  const [dayItems, own] = await Promise.all([
    ports.usageStats.userSlots(actor.userId, `d#${window.fromDay}`, `d#${window.toDay}`),
    ownResourceSums(actor.userId, window.fromDay, window.toDay, ports),
  ]);
  const others = await callsByOthers(actor.userId, window, own, ports);
  let requests = 0;
  let errors = 0;
  let credits = 0;
  let durationSum = 0;
  const byType = new Map<string, { requests: number; errors: number; creditsSpent: number }>(
    SHOWN_TYPES.map((type) => [type, { requests: 0, errors: 0, creditsSpent: 0 }]),
  );
  for (const item of dayItems) {
    requests += num(item, 'n');
    errors += num(item, 'e');
    credits += num(item, 'c');
    durationSum += num(item, 'd');
    for (const field of Object.keys(item)) {
      const type = /^n_(.+)$/.exec(field)?.[1];
      if (type === undefined) continue;
      const entry = byType.get(type) ?? { requests: 0, errors: 0, creditsSpent: 0 };
      entry.requests += num(item, `n_${type}`);
      entry.errors += num(item, `e_${type}`);
      entry.creditsSpent += num(item, `c_${type}`);
      byType.set(type, entry);
    }
  }
  const top = [...own.values()].sort((a, b) => b.requests - a.requests || a.resourceId.localeCompare(b.resourceId)).slice(0, TOP_RESOURCES);
  const topResources = await Promise.all(
    top.map(async (r) => ({
      resourceId: r.resourceId,
      resourceType: r.resourceType,
      name: await nameOf(actor.userId, r.resourceType, r.resourceId, ports),
      requests: r.requests,
      errors: r.errors,
      creditsSpent: roundCredits(r.creditsSpent),
    })),
  );
  return {
    days: query.days,
    from: window.from,
    to: window.to,
    requests,
    errors,
    errorRate: rate(errors, requests),
    creditsSpent: roundCredits(credits),
    avgDurationMs: requests === 0 ? 0 : Math.round(durationSum / requests),
    byType: Object.fromEntries([...byType].map(([type, f]) => [type, { ...f, creditsSpent: roundCredits(f.creditsSpent) }])),
    topResources,
    // What the caller's public resources served to others: counts only.
    publicUsage: {
      requests: others.reduce((sum, r) => sum + r.requests, 0),
      errors: others.reduce((sum, r) => sum + r.errors, 0),
    },
  };
}

/** GET /analytics/resources: per resource, the caller's runs of it, and others' calls of the caller's public ones. */
export async function getResources(actor: UserActor, query: ResourcesQuery, ports: AnalyticsPorts) {
  const window = dayWindow(ports.clock.now(), query.days);
  const own = await ownResourceSums(actor.userId, window.fromDay, window.toDay, ports);
  const others = await callsByOthers(actor.userId, window, own, ports);
  const rows = new Map<string, Omit<ResourceFigures, 'name'> & { name?: string }>();
  for (const [key, sum] of own) {
    rows.set(key, {
      resourceId: sum.resourceId,
      resourceType: sum.resourceType,
      requests: sum.requests,
      errors: sum.errors,
      creditsSpent: roundCredits(sum.creditsSpent),
      p50DurationMs: percentileOf(sum.histogram, 0.5),
      p95DurationMs: percentileOf(sum.histogram, 0.95),
      byOthers: null,
    });
  }
  for (const other of others) {
    const key = `${other.resourceType}#${other.resourceId}`;
    const byOthers = { requests: other.requests, errors: other.errors };
    const row = rows.get(key);
    if (row !== undefined) rows.set(key, { ...row, byOthers, name: other.name });
    else if (other.requests > 0) rows.set(key, { ...other, byOthers, creditsSpent: 0, requests: 0, errors: 0, p50DurationMs: null, p95DurationMs: null });
  }
  const chosen = [...rows.values()]
    .sort((a, b) => b.requests + (b.byOthers?.requests ?? 0) - (a.requests + (a.byOthers?.requests ?? 0)) || a.resourceId.localeCompare(b.resourceId))
    .slice(0, query.limit);
  const resources: ResourceFigures[] = await mapBounded(chosen, READS_IN_FLIGHT, async ({ name, ...row }) => ({
    ...row,
    name: name ?? (await nameOf(actor.userId, row.resourceType, row.resourceId, ports)),
  }));
  return { days: query.days, from: window.from, to: window.to, resources };
}

const STEP_MS: Record<Interval, number> = { hour: HOUR_MS, day: DAY_MS };

/** The slot of the counter item holding time `t` at `interval`. */
const slotAt = (interval: Interval, t: number) => (interval === 'hour' ? hourSlot(t) : daySlot(t));

/** GET /analytics/timeseries: one point per UTC hour or day from `from` to `to`, zero where nothing ran. */
export async function getTimeseries(actor: UserActor, query: TimeseriesQuery, ports: AnalyticsPorts) {
  const step = STEP_MS[query.interval];
  const now = ports.clock.now();
  const to = Math.floor((query.to ?? now) / step) * step;
  const defaultPoints = query.interval === 'hour' ? 24 : 30;
  const from = Math.floor((query.from ?? to - (defaultPoints - 1) * step) / step) * step;
  if (from > to) throw new ValidationError('Invalid query parameters', ['from: must not be after to']);
  const count = (to - from) / step + 1;
  const max = MAX_POINTS[query.interval];
  if (count > max) {
    throw new ValidationError('Invalid query parameters', [`from: the range holds ${count} ${query.interval}s; at most ${max} at interval=${query.interval}`]);
  }
  const items = await ports.usageStats.userSlots(actor.userId, slotAt(query.interval, from), slotAt(query.interval, to));
  const bySlot = new Map<string, CounterItem>(items.map((item) => [item.slot, item]));
  const valueOf = (item: CounterItem | undefined): number => {
    if (item === undefined) return 0;
    if (query.metric === 'requests') return num(item, 'n');
    if (query.metric === 'errors') return num(item, 'e');
    if (query.metric === 'credits') return roundCredits(num(item, 'c'));
    const n = num(item, 'n');
    return n === 0 ? 0 : Math.round(num(item, 'd') / n);
  };
  const points = Array.from({ length: count }, (_, i) => {
    const t = from + i * step;
    return { t: new Date(t).toISOString(), value: valueOf(bySlot.get(slotAt(query.interval, t))) };
  });
  return { metric: query.metric, interval: query.interval, from: new Date(from).toISOString(), to: new Date(to).toISOString(), points };
}
