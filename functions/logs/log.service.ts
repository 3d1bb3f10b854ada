import { requireUser, type UserActor } from '../core/auth/actor.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { BlobStore } from '../core/blobs.ts';
import type { Clock } from '../core/clock.ts';
import { NotFoundError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LoggedBody, UsageLogRecord } from '../core/usage-log.ts';
import type { ListLogsQuery } from './log.schema.ts';
import type { LogStore } from './log.store.ts';

export interface LogPorts {
  readonly logs: LogStore;
  readonly blobs: BlobStore;
  readonly clock: Clock;
}

/** Characters of each body shown in listings and traces; the full record has the whole body. */
export const SUMMARY_PREVIEW_CHARS = 200;
/** Records of one trace read at most (all users together). */
export const MAX_TRACE_RECORDS = 1000;
const HOUR_MS = 3_600_000;

/** A record as listings and trace nodes show it: everything but the bodies, which are cut to a preview. */
export interface LogSummary {
  readonly requestId: string;
  readonly rootRequestId: string;
  readonly parentRequestId: string | null;
  readonly parentConversationId: string | null;
  readonly parentAgentId: string | null;
  readonly resourceId: string;
  readonly resourceType: UsageLogRecord['resourceType'];
  readonly requestType: string | null;
  readonly status: UsageLogRecord['status'];
  readonly createdAt: number;
  readonly metrics: UsageLogRecord['metrics'];
  readonly creditsUsed: number;
  readonly error: UsageLogRecord['error'];
  readonly request: { readonly preview: string; readonly sizeBytes: number };
  readonly response: { readonly preview: string; readonly sizeBytes: number };
}

export interface LogBody {
  /** Parsed JSON when the stored text is JSON, else the text. */
  readonly body: unknown;
  readonly sizeBytes: number;
  /** True only when the full body could not be read and `body` is the stored 8 KB preview (text). */
  readonly truncated: boolean;
}

export interface LogDetail extends Omit<LogSummary, 'request' | 'response'> {
  readonly userId: string;
  /** Epoch milliseconds, like every other time in the API (the table keeps seconds for its TTL). */
  readonly expiresAt: number;
  readonly request: LogBody;
  readonly response: LogBody;
}

export type TraceNode = (LogSummary & { readonly children: TraceNode[] }) | RedactedNode;

/**
 * A hop the caller may not see: another user's record, or one that was not recorded or has expired
 * (the two look the same, so a placeholder never tells whether another user's record exists).
 */
export interface RedactedNode {
  readonly requestId: string;
  readonly redacted: true;
  readonly children: TraceNode[];
}

export interface TraceResponse {
  /** The root request id of the chain. */
  readonly traceId: string;
  readonly root: TraceNode;
  /** The caller's own records in the tree. */
  readonly count: number;
  /** True when the trace had more than MAX_TRACE_RECORDS records; the tree shows the oldest ones. */
  readonly scanLimitReached: boolean;
}

export interface LogListing {
  readonly logs: LogSummary[];
  readonly page: number;
  readonly pageSize: number;
  readonly count: number;
  readonly hasMore: boolean;
  /** Hours, as applied. */
  readonly timeRange: number;
  /** True when reading stopped at the platform's read budget before the page was complete; narrow the query. */
  readonly scanLimitReached: boolean;
}

/** GET /logs and /logs/user: the caller's records of the last `timeRange` hours, newest first, one page. */
export async function listLogs(actor: UserActor, query: ListLogsQuery, ports: LogPorts): Promise<LogListing> {
  const now = ports.clock.now();
  const offset = query.page * query.pageSize;
  // One more than the page needs tells whether another page follows.
  const want = offset + query.pageSize + 1;
  const scan = await ports.logs.listByUser(actor.userId, {
    since: now - query.timeRange * HOUR_MS,
    now,
    filters: { resourceId: query.resourceId, status: query.status, parentConversationId: query.parentConversationId },
    want,
  });
  const logs = scan.items.slice(offset, offset + query.pageSize).map(summaryOf);
  return {
    logs,
    page: query.page,
    pageSize: query.pageSize,
    count: logs.length,
    // Unknown when the read stopped early, so say more may follow.
    hasMore: scan.items.length > offset + query.pageSize || scan.scanLimitReached,
    timeRange: query.timeRange,
    scanLimitReached: scan.scanLimitReached,
  };
}

/** GET /logs/{requestId}: one record with its full bodies. */
export async function getLog(scope: RequestScope, requestId: string, ports: LogPorts): Promise<LogDetail> {
  const record = await ownedRecord(requireUser(scope.actor), requestId, ports);
  const [request, response] = await Promise.all([fullBody(record.request, ports, scope.log), fullBody(record.response, ports, scope.log)]);
  const { request: _request, response: _response, ...summary } = summaryOf(record);
  return { ...summary, userId: record.userId, expiresAt: record.expiresAt * 1000, request, response };
}

/** GET /logs/request/{requestId}/trace: the caller's request and everything it caused, as a tree. */
export async function getRequestTrace(actor: UserActor, requestId: string, ports: LogPorts): Promise<TraceResponse> {
  const record = await ownedRecord(actor, requestId, ports);
  const scan = await ports.logs.listByRoot(record.rootRequestId, { now: ports.clock.now(), max: MAX_TRACE_RECORDS });
  // The index is eventually consistent: a record written a moment ago may not be in it yet.
  const records = scan.items.some((r) => r.requestId === requestId) ? scan.items : [...scan.items, record];
  const tree = buildTree(records, record.rootRequestId);
  const node = tree.get(requestId)!;
  return traceResponse(record.rootRequestId, node, actor.userId, scan.scanLimitReached);
}

/** GET /logs/trace/{traceId}: the whole tree of a root request, as far as the caller may see it. */
export async function getTrace(actor: UserActor, traceId: string, ports: LogPorts): Promise<TraceResponse> {
  const scan = await ports.logs.listByRoot(traceId, { now: ports.clock.now(), max: MAX_TRACE_RECORDS });
  // A trace without any record of the caller is reported as absent, whether or not others have some.
  if (!scan.items.some((r) => r.userId === actor.userId)) {
    throw new NotFoundError(`Trace ${traceId} not found. A trace id is the root request id (rootRequestId) of a chain.`);
  }
  const tree = buildTree(scan.items, traceId);
  return traceResponse(traceId, tree.get(traceId)!, actor.userId, scan.scanLimitReached);
}

/** The caller's live record; another user's record is reported as absent, so request ids cannot be probed. */
async function ownedRecord(actor: UserActor, requestId: string, ports: LogPorts): Promise<UsageLogRecord> {
  const record = await ports.logs.get(requestId, ports.clock.now());
  if (record === null || record.userId !== actor.userId) throw new NotFoundError(`Log ${requestId} not found.`);
  return record;
}

function preview(body: LoggedBody): { preview: string; sizeBytes: number } {
  return { preview: body.preview.slice(0, SUMMARY_PREVIEW_CHARS), sizeBytes: body.sizeBytes };
}

export function summaryOf(record: UsageLogRecord): LogSummary {
  return {
    requestId: record.requestId,
    rootRequestId: record.rootRequestId,
    parentRequestId: record.parentRequestId,
    parentConversationId: record.parentConversationId,
    parentAgentId: record.parentAgentId,
    resourceId: record.resourceId,
    resourceType: record.resourceType,
    requestType: record.requestType,
    status: record.status,
    createdAt: record.createdAt,
    metrics: record.metrics,
    creditsUsed: record.creditsUsed,
    error: record.error,
    request: preview(record.request),
    response: preview(record.response),
  };
}

async function fullBody(body: LoggedBody, ports: LogPorts, log: Logger): Promise<LogBody> {
  if (!body.truncated) return { body: parseBody(body.preview, body.encoding), sizeBytes: body.sizeBytes, truncated: false };
  const blob = body.blobKey === null ? null : await ports.blobs.get(body.blobKey);
  if (blob === null) {
    // The writer stores the blob before the record, so this means it was deleted since; show what the record kept.
    log.warn('usage-log body missing from the blob store', { blobKey: body.blobKey });
    return { body: body.preview, sizeBytes: body.sizeBytes, truncated: true };
  }
  return { body: parseBody(blob.toString('utf8'), body.encoding), sizeBytes: body.sizeBytes, truncated: false };
}

/** JSON bodies come back as values; text bodies (e.g. a chat prompt) stay text, even when they look like JSON. */
function parseBody(text: string, encoding: LoggedBody['encoding']): unknown {
  if (encoding === 'text') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One request of a trace while the tree is built; `record` is null for a hop without a readable record. */
interface Draft {
  readonly requestId: string;
  readonly record: UsageLogRecord | null;
  parentId: string | null;
  readonly children: Draft[];
  /** createdAt, or for a hop without a record the earliest of its children, so siblings sort by time. */
  sortKey: number;
}

/**
 * Links a trace's records (every user's) by parent request id under the root `traceId`. Lineage
 * headers are not signed, so the input may be inconsistent: a parent that is missing becomes a
 * record-less hop under the root, a record naming no parent hangs under the root, and cycles are
 * cut at the root. Every draft ends up reachable from the root exactly once.
 */
export function buildTree(records: readonly UsageLogRecord[], traceId: string): Map<string, Draft> {
  const drafts = new Map<string, Draft>();
  const draft = (requestId: string, record: UsageLogRecord | null): Draft => {
    const d: Draft = { requestId, record, parentId: null, children: [], sortKey: record?.createdAt ?? Number.POSITIVE_INFINITY };
    drafts.set(requestId, d);
    return d;
  };
  for (const record of records) if (!drafts.has(record.requestId)) draft(record.requestId, record);
  const root = drafts.get(traceId) ?? draft(traceId, null);

  for (const d of [...drafts.values()]) {
    if (d === root) continue;
    let parentId = d.record?.parentRequestId ?? null;
    if (parentId === null || parentId === d.requestId) parentId = traceId;
    if (!drafts.has(parentId)) draft(parentId, null).parentId = traceId;
    d.parentId = parentId;
  }

  // Cut cycles: walk up from each draft; a draft met twice on one walk is in a cycle and moves under the root.
  const reachesRoot = new Set<string>([traceId]);
  for (const start of drafts.values()) {
    const walked = new Set<string>();
    let current = start;
    while (!reachesRoot.has(current.requestId)) {
      if (walked.has(current.requestId)) {
        current.parentId = traceId;
        break;
      }
      walked.add(current.requestId);
      current = drafts.get(current.parentId!)!;
    }
    for (const id of walked) reachesRoot.add(id);
  }

  for (const d of drafts.values()) if (d !== root) drafts.get(d.parentId!)!.children.push(d);
  sortSubtree(root);
  return drafts;
}

function sortSubtree(d: Draft): void {
  for (const child of d.children) sortSubtree(child);
  d.children.sort((a, b) => a.sortKey - b.sortKey || (a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0));
  if (d.record === null) d.sortKey = d.children[0]?.sortKey ?? Number.POSITIVE_INFINITY;
}

/**
 * The tree as `viewerId` may see it. Own records appear in full (as summaries); another user's
 * record appears only as a redacted placeholder, and only when one of the viewer's own records lies
 * below it: that keeps every own record under its true parent without showing anything of the
 * other user beyond an id on the path. Foreign branches with no own record below are left out.
 */
function traceResponse(traceId: string, top: Draft, viewerId: string, scanLimitReached: boolean): TraceResponse {
  let count = 0;
  const render = (d: Draft, isTop: boolean): TraceNode | null => {
    const children = d.children.map((c) => render(c, false)).filter((c): c is TraceNode => c !== null);
    if (d.record !== null && d.record.userId === viewerId) {
      count++;
      return { ...summaryOf(d.record), children };
    }
    return children.length > 0 || isTop ? { requestId: d.requestId, redacted: true, children } : null;
  };
  const root = render(top, true)!;
  return { traceId, root, count, scanLimitReached };
}
