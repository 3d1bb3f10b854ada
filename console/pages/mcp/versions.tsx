import { useEffect, useMemo, useState } from 'preact/hooks';
import { dataOf, useApi, useLoad, useSubmit, type Api } from '../../api.ts';
import { href } from '../../router.ts';
import { Button, ConfirmButton, Select } from '../../ui/form.tsx';
import { Section } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading, Notice, When } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import { diffStats, lineDiff, signOf } from './diff.ts';
import { endpointOf } from './rpc.ts';
import type { McpServerRecord } from './types.ts';

function sourceOf(api: Api, serverId: string, version: number) {
  return dataOf(api.client.GET('/mcp-admin/{serverId}/versions/{version}', { params: { path: { serverId, version } } }));
}

/** The Versions tab: every snapshot with its change note, a diff of two, rollback and pinning. */
export function McpVersions(props: { server: McpServerRecord; onChanged: () => void }) {
  const api = useApi();
  const serverId = props.server.serverId;
  const versions = useLoad((a) => dataOf(a.client.GET('/mcp-admin/{serverId}/versions', { params: { path: { serverId } } })), [serverId]);
  const [pinned, setPinned] = useState<number | null>(null);
  const rollback = useSubmit((a, targetVersion: number) =>
    dataOf(a.client.POST('/mcp-admin/{serverId}/rollback', { params: { path: { serverId } }, body: { targetVersion } })),
  );
  const list = versions.data?.versions;
  const latest = versions.data?.latestVersion ?? props.server.latestVersion;

  return (
    <>
      <Section title="Versions">
        <p class="muted">
          Every change of the source is a version of its own; nothing is rewritten. Rolling back writes a new version copying an old one. Pinning a version
          gives an endpoint that keeps running that version's source whatever goes live later.
        </p>
        <ErrorNote error={versions.error ?? rollback.error} />
        {rollback.result === undefined ? null : (
          <Notice tone="success">
            Rolled back to version {rollback.result.rolledBackTo}: version {rollback.result.version} is live.
          </Notice>
        )}
        {pinned === null ? null : <Pinned url={endpointOf(api, serverId, pinned)} version={pinned} serverId={serverId} />}
        {list === undefined && versions.error === undefined ? <Loading what="versions" /> : null}
        <DataTable
          caption="Versions, newest first"
          rows={list}
          rowKey={(v) => String(v.version)}
          empty="No versions."
          columns={[
            {
              header: 'Version',
              cell: (v) => (
                <>
                  v{v.version} {v.version === latest ? <Badge tone="ok">live</Badge> : null}
                </>
              ),
            },
            { header: 'Change note', cell: (v) => (v.changeNote === '' ? <span class="muted">none</span> : v.changeNote) },
            { header: 'Written', cell: (v) => <When at={v.createdAt} />, wide: true },
            { header: 'Rollback of', cell: (v) => (v.rollbackOf === null ? '—' : `v${v.rollbackOf}`), wide: true },
            { header: 'Tools', cell: (v) => v.tools.join(', ') || '—', wide: true },
            { header: 'Size', cell: (v) => `${v.sizeBytes.toLocaleString()} B`, wide: true },
            {
              header: 'Actions',
              cell: (v) => (
                <span class="am-row-actions">
                  <Button onClick={() => setPinned(v.version)} aria-label={`Pin version ${v.version}`}>
                    Pin
                  </Button>
                  {v.version === latest ? null : (
                    <ConfirmButton
                      label={`Roll back to v${v.version}`}
                      confirm={`Make a copy of version ${v.version} live?`}
                      busy={rollback.busy}
                      onConfirm={async () => {
                        if ((await rollback.run(v.version)) === undefined) return;
                        versions.reload();
                        props.onChanged();
                      }}
                    />
                  )}
                </span>
              ),
            },
          ]}
        />
      </Section>
      {list === undefined || list.length < 2 ? null : <VersionDiff serverId={serverId} versions={list.map((v) => v.version)} />}
    </>
  );
}

function Pinned(props: { url: string; version: number; serverId: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="note note-info am-pinned" role="status">
      <strong>Version {props.version} pinned</strong>
      <p>MCP clients given this address run version {props.version}, whatever version is live (SPEC: v=N on the endpoint).</p>
      <div class="secret-row">
        <code class="am-url">{props.url}</code>
        <Button
          onClick={() =>
            void navigator.clipboard?.writeText(props.url).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy address'}
        </Button>
        <a href={`${href('mcp', props.serverId, 'tools')}?v=${props.version}`}>Test the tools of version {props.version}</a>
      </div>
    </div>
  );
}

/** Two versions chosen, and the line diff of their sources, each line signed + or - (not only coloured). */
function VersionDiff(props: { serverId: string; versions: readonly number[] }) {
  const [from, setFrom] = useState(String(props.versions[1]));
  const [to, setTo] = useState(String(props.versions[0]));
  // A new version (after a rollback) moves the default pair along.
  useEffect(() => {
    setFrom(String(props.versions[1]));
    setTo(String(props.versions[0]));
  }, [props.versions[0]]);
  const sources = useLoad(
    async (api) => Promise.all([sourceOf(api, props.serverId, Number(from)), sourceOf(api, props.serverId, Number(to))]),
    [props.serverId, from, to],
  );
  const diff = useMemo(() => {
    const [a, b] = sources.data ?? [];
    if (a?.sourceCode === undefined || b?.sourceCode === undefined) return undefined;
    return lineDiff(a.sourceCode, b.sourceCode);
  }, [sources.data]);
  const options = props.versions.map((v) => ({ value: String(v), label: `Version ${v}` }));
  const stats = diff === undefined ? undefined : diffStats(diff);
  return (
    <Section title="Compare versions">
      <div class="form form-inline">
        <Select label="From version" value={from} onValue={setFrom} options={options} />
        <Select label="To version" value={to} onValue={setTo} options={options} />
      </div>
      <ErrorNote error={sources.error} />
      {sources.loading ? <Loading what="the sources" /> : null}
      {diff === undefined || stats === undefined ? (
        sources.data === undefined ? null : (
          <Notice>The source of one of these versions is not shown to you.</Notice>
        )
      ) : (
        <>
          <p class="am-diff-stats" role="status">
            From version {from} to version {to}: {stats.added} {stats.added === 1 ? 'line' : 'lines'} added (+), {stats.removed}{' '}
            {stats.removed === 1 ? 'line' : 'lines'} removed (-).
          </p>
          <div class="am-diff" role="region" aria-label={`Changes from version ${from} to version ${to}`} tabIndex={0}>
            <pre>
              {diff.map((line, index) => {
                const body = (
                  <>
                    <span class="am-diff-num" aria-hidden="true">
                      {line.oldLine ?? ''}
                    </span>
                    <span class="am-diff-num" aria-hidden="true">
                      {line.newLine ?? ''}
                    </span>
                    <span class="am-diff-sign">{signOf(line.kind)}</span>
                    {line.text}
                    {'\n'}
                  </>
                );
                if (line.kind === 'added')
                  return (
                    <ins class="am-diff-line am-diff-added" key={index}>
                      {body}
                    </ins>
                  );
                if (line.kind === 'removed')
                  return (
                    <del class="am-diff-line am-diff-removed" key={index}>
                      {body}
                    </del>
                  );
                return (
                  <span class="am-diff-line" key={index}>
                    {body}
                  </span>
                );
              })}
            </pre>
          </div>
        </>
      )}
    </Section>
  );
}
