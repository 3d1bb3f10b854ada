import { useEffect, useState } from 'preact/hooks';
import { dataOf, useApi } from '../../api.ts';
import { href } from '../../router.ts';
import { Button } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import type { McpServerRecord } from './types.ts';

/** The signed-in user's MCP servers, a page at a time. */
export function McpList() {
  const api = useApi();
  const [rows, setRows] = useState<McpServerRecord[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const load = async (after: string | null) => {
    setBusy(true);
    setError(undefined);
    try {
      const page = await dataOf(
        api.client.GET('/mcp-admin/list', { params: { query: { visibility: 'all', limit: 50, ...(after === null ? {} : { cursor: after }) } } }),
      );
      setRows((previous) => (after === null ? page.servers : [...(previous ?? []), ...page.servers]));
      setCursor(page.nextCursor);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [api]);

  return (
    <Page
      title="MCP servers"
      lead="Node.js MCP servers hosted for you: every source change is a version you can diff, pin and roll back to."
      actions={
        <a class="button button-primary" href={href('mcp', 'new')}>
          New server
        </a>
      }
    >
      <Section title="Your servers">
        <ErrorNote error={error} />
        {rows === undefined && error === undefined ? <Loading what="servers" /> : null}
        <DataTable
          caption="Your MCP servers"
          rows={rows}
          rowKey={(s) => s.serverId}
          empty={
            <>
              No MCP servers yet. <a href={href('mcp', 'new')}>Create your first server</a>.
            </>
          }
          columns={[
            { header: 'Name', cell: (s) => <a href={href('mcp', s.serverId)}>{s.serverName}</a> },
            { header: 'Description', cell: (s) => s.description, wide: true },
            { header: 'Visibility', cell: (s) => <Badge tone={s.visibility === 'public' ? 'ok' : 'neutral'}>{s.visibility}</Badge> },
            { header: 'Live version', cell: (s) => `v${s.latestVersion}` },
            { header: 'Tools', cell: (s) => s.tools.join(', ') || '—', wide: true },
            {
              header: 'Test',
              cell: (s) => (
                <a href={href('mcp', s.serverId, 'tools')} aria-label={`Test the tools of ${s.serverName}`}>
                  Tools
                </a>
              ),
            },
          ]}
        />
        {cursor === null ? null : (
          <Button busy={busy} onClick={() => void load(cursor)}>
            More
          </Button>
        )}
      </Section>
    </Page>
  );
}
