import type { paths } from '../../../clients/typescript/src/index.ts';
import { dataOf, useLoad } from '../../api.ts';
import { href } from '../../router.ts';
import { Badge, ErrorNote, When } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';

/** One record of `GET /logs` (a light summary). */
export type LogSummary = paths['/logs']['get']['responses']['2XX']['content']['application/json']['data']['logs'][number];

export type LogStatus = LogSummary['status'];

export function statusTone(status: string | null | undefined): 'ok' | 'bad' | 'warn' | 'neutral' {
  if (status === 'success' || status === 'active') return 'ok';
  if (status === 'error') return 'bad';
  if (status === 'timeout' || status === 'ended') return 'warn';
  return 'neutral';
}

/** `agent`, or `channel · CHANNEL_REPLY` when the record names its request type. */
export function kindOf(log: Pick<LogSummary, 'resourceType' | 'requestType'>): string {
  return log.requestType === null ? log.resourceType : `${log.resourceType} · ${log.requestType}`;
}

/** Where the console shows the resource a record is about, when it has a page for its kind. */
export function resourceHref(log: Pick<LogSummary, 'resourceType' | 'resourceId'>): string | null {
  const page: Partial<Record<LogSummary['resourceType'], string>> = {
    agent: 'agents',
    voice: 'agents',
    action: 'actions',
    mcp: 'mcp',
    cron: 'cron',
    channel: 'channels',
  };
  const key = page[log.resourceType];
  return key === undefined ? null : href(key, log.resourceId);
}

export function duration(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

/** Records as a table; each record's time links to its detail page. */
export function LogTable(props: { caption: string; logs: readonly LogSummary[] | undefined; empty: string }) {
  return (
    <DataTable
      caption={props.caption}
      rows={props.logs}
      rowKey={(log) => log.requestId}
      empty={props.empty}
      columns={[
        {
          header: 'When',
          cell: (log) => (
            <a href={href('logs', log.requestId)} title="Open the record">
              <When at={log.createdAt} />
            </a>
          ),
        },
        { header: 'Kind', cell: (log) => kindOf(log) },
        { header: 'Resource', cell: (log) => <code class="id">{log.resourceId}</code>, wide: true },
        { header: 'Status', cell: (log) => <Badge tone={statusTone(log.status)}>{log.status}</Badge> },
        { header: 'Time', cell: (log) => duration(log.metrics.durationMs), wide: true },
        { header: 'Credits', cell: (log) => log.creditsUsed.toLocaleString(), wide: true },
        {
          header: 'Error',
          cell: (log) => (log.error === null ? <span class="muted">none</span> : <span class="log-error">{`${log.error.code}: ${log.error.message}`}</span>),
          wide: true,
        },
      ]}
    />
  );
}

/** The latest records about one resource (a cron job's runs, a channel's deliveries), last 30 days. */
export function RecentRecords(props: { resourceId: string; caption: string; empty: string }) {
  const logs = useLoad(
    (api) => dataOf(api.client.GET('/logs', { params: { query: { resourceId: props.resourceId, timeRange: '720', pageSize: '10' } } })),
    [props.resourceId],
  );
  return (
    <>
      <ErrorNote error={logs.error} />
      <LogTable caption={props.caption} logs={logs.data?.logs} empty={props.empty} />
      <p>
        <a href={`#/logs?resourceId=${encodeURIComponent(props.resourceId)}&timeRange=720`}>All its records in the logs</a>
      </p>
    </>
  );
}
