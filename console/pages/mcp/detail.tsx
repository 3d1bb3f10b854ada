import { dataOf, useLoad, useSubmit } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { ConfirmButton } from '../../ui/form.tsx';
import { Page, Tabs } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading } from '../../ui/status.tsx';
import { McpEditor } from './editor.tsx';
import { McpTools } from './tools.tsx';
import { McpVersions } from './versions.tsx';

/** `#/mcp/<id>` (Server), `#/mcp/<id>/versions` and `#/mcp/<id>/tools`, with delete beside the title. */
export function McpDetail(props: { serverId: string; tab: 'server' | 'versions' | 'tools'; pinned: number | null }) {
  const server = useLoad((api) => dataOf(api.client.GET('/mcp-admin/{serverId}', { params: { path: { serverId: props.serverId } } })), [props.serverId]);
  const remove = useSubmit((api) => dataOf(api.client.DELETE('/mcp-admin/delete', { body: { serverId: props.serverId } })));
  if (server.data === undefined)
    return (
      <Page title="MCP server">
        {server.error === undefined ? <Loading what="the server" /> : <ErrorNote error={server.error} title="This server could not be loaded" />}
        <p>
          <a href={href('mcp')}>All MCP servers</a>
        </p>
      </Page>
    );
  const data = server.data;
  return (
    <Page
      title={data.serverName}
      actions={
        <ConfirmButton
          label="Delete server"
          confirm={`Delete ${data.serverName} and all its versions?`}
          busy={remove.busy}
          onConfirm={async () => (await remove.run()) && navigate('mcp')}
        />
      }
    >
      <p class="am-meta">
        <a href={href('mcp')}>All MCP servers</a> · <code>{data.serverId}</code> ·{' '}
        <Badge tone={data.visibility === 'public' ? 'ok' : 'neutral'}>{data.visibility}</Badge> · live version {data.latestVersion}
      </p>
      <p class="am-meta">
        Endpoint <code class="am-url">{data.endpointUrl}</code>
        {data.slugEndpointUrl === null ? null : (
          <>
            {' '}
            or <code class="am-url">{data.slugEndpointUrl}</code>
          </>
        )}
      </p>
      <ErrorNote error={remove.error} />
      <Tabs
        label="MCP server"
        tabs={[
          { href: href('mcp', data.serverId), label: 'Server', current: props.tab === 'server' },
          { href: href('mcp', data.serverId, 'versions'), label: 'Versions', current: props.tab === 'versions' },
          { href: href('mcp', data.serverId, 'tools'), label: 'Tools', current: props.tab === 'tools' },
        ]}
      />
      {props.tab === 'server' ? <McpEditor server={data} onSaved={server.reload} /> : null}
      {props.tab === 'versions' ? <McpVersions server={data} onChanged={server.reload} /> : null}
      {props.tab === 'tools' ? <McpTools server={data} pinned={props.pinned} /> : null}
    </Page>
  );
}
