import { useEffect, useState } from 'preact/hooks';
import { dataOf, useLoad } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { href } from '../router.ts';
import { Facts, useMyAgents } from '../ui/automate-kit.tsx';
import { Button, Form, Select, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, ErrorNote, JsonView, Loading, Notice, When } from '../ui/status.tsx';
import { duration, kindOf, LogTable, resourceHref, statusTone, type LogStatus } from './logs/log-table.tsx';
import { TraceTree, type TraceNode } from './logs/trace-tree.tsx';

/** `#/logs?timeRange=24&status=error&resourceId=…&page=0&pageSize=50` and `#/logs/<requestId>`. */
export default function LogsPage(props: PageProps) {
  const requestId = props.route.segments[1];
  return requestId === undefined ? (
    <LogList query={props.route.query} />
  ) : (
    <LogDetail requestId={requestId} key={requestId} whole={props.route.query.get('trace') === 'root'} />
  );
}

const TIME_RANGES = [
  { value: '1', label: 'Last hour' },
  { value: '6', label: 'Last 6 hours' },
  { value: '24', label: 'Last 24 hours' },
  { value: '72', label: 'Last 3 days' },
  { value: '168', label: 'Last 7 days' },
  { value: '720', label: 'Last 30 days' },
];
const PAGE_SIZES = ['20', '50', '100', '200'];

interface Filters {
  timeRange: string;
  status: '' | LogStatus;
  resourceId: string;
  parentConversationId: string;
  pageSize: string;
}

function filtersOf(query: URLSearchParams): Filters & { page: number } {
  const status = query.get('status') ?? '';
  return {
    timeRange: query.get('timeRange') ?? '24',
    status: status === 'success' || status === 'error' || status === 'timeout' ? status : '',
    resourceId: query.get('resourceId') ?? '',
    parentConversationId: query.get('parentConversationId') ?? '',
    pageSize: query.get('pageSize') ?? '50',
    page: Math.max(0, Number(query.get('page') ?? '0') || 0),
  };
}

/** The logs address for filters and a page: the filters live in the URL, so back, forward and links keep them. */
function logsHref(filters: Filters, page: number): string {
  const query = new URLSearchParams();
  if (filters.timeRange !== '24') query.set('timeRange', filters.timeRange);
  if (filters.status !== '') query.set('status', filters.status);
  if (filters.resourceId.trim() !== '') query.set('resourceId', filters.resourceId.trim());
  if (filters.parentConversationId.trim() !== '') query.set('parentConversationId', filters.parentConversationId.trim());
  if (filters.pageSize !== '50') query.set('pageSize', filters.pageSize);
  if (page > 0) query.set('page', String(page));
  const text = query.toString();
  return `#/logs${text === '' ? '' : `?${text}`}`;
}

function LogList(props: { query: URLSearchParams }) {
  const applied = filtersOf(props.query);
  const key = logsHref(applied, applied.page);
  const [form, setForm] = useState<Filters>(applied);
  useEffect(() => setForm(applied), [key]);
  const logs = useLoad(
    (api) =>
      dataOf(
        api.client.GET('/logs', {
          params: {
            query: {
              timeRange: applied.timeRange,
              pageSize: applied.pageSize,
              page: String(applied.page),
              ...(applied.status === '' ? {} : { status: applied.status }),
              ...(applied.resourceId === '' ? {} : { resourceId: applied.resourceId }),
              ...(applied.parentConversationId === '' ? {} : { parentConversationId: applied.parentConversationId }),
            },
          },
        }),
      ),
    [key],
  );
  const set = (field: keyof Filters) => (value: string) => setForm({ ...form, [field]: value });
  return (
    <Page title="Logs" lead="Every run writes one record: what ran, its status, time and credits, and what caused it. Open one for its bodies and its trace.">
      <Form
        label="Filter the logs"
        class="form form-inline log-filters"
        onSubmit={() => {
          location.hash = logsHref(form, 0);
        }}
      >
        <Select label="Time" value={form.timeRange} onValue={set('timeRange')} options={TIME_RANGES} />
        <Select
          label="Status"
          value={form.status}
          onValue={set('status')}
          options={[
            { value: '', label: 'Any' },
            { value: 'success', label: 'Success' },
            { value: 'error', label: 'Error' },
            { value: 'timeout', label: 'Timeout' },
          ]}
        />
        <TextInput label="Resource id" spellcheck={false} value={form.resourceId} onValue={set('resourceId')} />
        <TextInput
          label="Conversation id"
          hint="Records a conversation caused"
          spellcheck={false}
          value={form.parentConversationId}
          onValue={set('parentConversationId')}
        />
        <Select label="Per page" value={form.pageSize} onValue={set('pageSize')} options={PAGE_SIZES} />
        <Button type="submit" variant="primary">
          Apply
        </Button>
      </Form>
      <ErrorNote error={logs.error} />
      {logs.loading ? <Loading what="records" /> : null}
      {logs.data?.scanLimitReached ? (
        <Notice tone="warning">Reading stopped before this page was complete: narrow the time or filter by resource or status.</Notice>
      ) : null}
      <Section title="Records">
        <LogTable caption="Usage records, newest first" logs={logs.data?.logs} empty="No records match these filters." />
        <nav class="pager" aria-label="Pages of records">
          {applied.page > 0 ? <a href={logsHref(applied, applied.page - 1)}>Previous page</a> : <span class="muted">Previous page</span>}
          <span>Page {applied.page + 1}</span>
          {logs.data?.hasMore ? <a href={logsHref(applied, applied.page + 1)}>Next page</a> : <span class="muted">Next page</span>}
        </nav>
      </Section>
    </Page>
  );
}

function LogDetail(props: { requestId: string; whole: boolean }) {
  const agents = useMyAgents();
  const log = useLoad((api) => dataOf(api.client.GET('/logs/{requestId}', { params: { path: { requestId: props.requestId } } })), [props.requestId]);
  const record = log.data;
  const rootId = record?.rootRequestId;
  const whole = props.whole && rootId !== undefined && rootId !== props.requestId;
  const trace = useLoad(
    async (api) => {
      if (rootId === undefined) return undefined;
      return whole
        ? dataOf(api.client.GET('/logs/trace/{traceId}', { params: { path: { traceId: rootId } } }))
        : dataOf(api.client.GET('/logs/request/{requestId}/trace', { params: { path: { requestId: props.requestId } } }));
    },
    [props.requestId, rootId, whole],
  );
  const nameOf = (resourceId: string) => agents.data?.find((a) => a.agentId === resourceId)?.agentName;
  const resource = record === undefined ? null : resourceHref(record);
  return (
    <Page title="Request" actions={<a href={href('logs')}>All logs</a>}>
      <p class="muted">
        <code class="id">{props.requestId}</code>
      </p>
      <ErrorNote error={log.error} />
      {record === undefined ? (
        log.error === undefined ? (
          <Loading what="the record" />
        ) : null
      ) : (
        <>
          <Facts
            items={[
              [
                'Status',
                <Badge tone={statusTone(record.status)} key="s">
                  {record.status}
                </Badge>,
              ],
              ['Kind', kindOf(record)],
              [
                'Resource',
                resource === null ? (
                  <code key="r">{record.resourceId}</code>
                ) : (
                  <a href={resource} key="r">
                    {nameOf(record.resourceId) ?? record.resourceId}
                  </a>
                ),
              ],
              ['When', <When at={record.createdAt} key="w" />],
              ['Duration', duration(record.metrics.durationMs)],
              ['Memory', record.metrics.memoryMb === null ? 'n/a' : `${record.metrics.maxMemoryUsedMb ?? '?'} of ${record.metrics.memoryMb} MB used`],
              ['Credits', record.creditsUsed.toLocaleString()],
              [
                'Caused by',
                record.parentRequestId === null ? (
                  'nothing (a direct call)'
                ) : (
                  <a href={href('logs', record.parentRequestId)} key="p">
                    request {record.parentRequestId}
                  </a>
                ),
              ],
              ['Conversation', record.parentConversationId ?? <span class="muted">none</span>],
              ['Kept until', <When at={record.expiresAt} key="k" />],
            ]}
          />
          {record.error === null ? null : (
            <div class="note note-error">
              <strong>{record.error.code}</strong>
              <p>{record.error.message}</p>
            </div>
          )}
          <Section title="Trace">
            {rootId !== undefined && rootId !== props.requestId ? (
              <p>
                {whole ? (
                  <a href={href('logs', props.requestId)}>Show only this request and what it caused</a>
                ) : (
                  <a href={`${href('logs', props.requestId)}?trace=root`}>Show the whole chain from its first request</a>
                )}
              </p>
            ) : null}
            <ErrorNote error={trace.error} />
            {trace.data === undefined ? (
              trace.error === undefined ? (
                <Loading what="the trace" />
              ) : null
            ) : (
              <>
                <p class="muted" id="trace-help">
                  {trace.data.count} of your records. Arrow keys move through the tree, Enter opens a record.
                </p>
                {trace.data.scanLimitReached ? <Notice tone="warning">The trace has more records than are read: the oldest are shown.</Notice> : null}
                <TraceTree root={trace.data.root as TraceNode} current={props.requestId} label="Trace of the request" nameOf={nameOf} />
              </>
            )}
          </Section>
          <Section title="Request body">
            <BodyView body={record.request} label="Request body" />
          </Section>
          <Section title="Response body">
            <BodyView body={record.response} label="Response body" />
          </Section>
        </>
      )}
    </Page>
  );
}

function BodyView(props: { body: { body: unknown; sizeBytes: number; truncated: boolean }; label: string }) {
  return (
    <>
      <p class="muted">
        {props.body.sizeBytes.toLocaleString()} bytes{props.body.truncated ? ' (only the first 8 KB could be read)' : ''}
      </p>
      {typeof props.body.body === 'string' ? (
        <pre class="json" tabIndex={0} aria-label={props.label}>
          {props.body.body}
        </pre>
      ) : (
        <JsonView value={props.body.body} label={props.label} />
      )}
    </>
  );
}
