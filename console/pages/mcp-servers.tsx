import type { PageProps } from '../app.tsx';
import { McpDetail } from './mcp/detail.tsx';
import { McpEditor } from './mcp/editor.tsx';
import { McpList } from './mcp/list.tsx';

/**
 * MCP servers (SPEC 4.4): `#/mcp` lists them, `#/mcp/new` creates one; `#/mcp/<id>` edits it,
 * `#/mcp/<id>/versions` shows its versions with their change notes, a diff, rollback and pinning,
 * and `#/mcp/<id>/tools` lists its tools over MCP and calls one (`?v=N` pins a version).
 */
export default function McpServers({ route }: PageProps) {
  const [, id, tab] = route.segments;
  if (id === undefined) return <McpList />;
  if (id === 'new') return <McpEditor />;
  const pinned = Number(route.query.get('v') ?? route.query.get('version'));
  return (
    <McpDetail
      serverId={id}
      tab={tab === 'versions' || tab === 'tools' ? tab : 'server'}
      pinned={Number.isInteger(pinned) && pinned > 0 ? pinned : null}
      key={id}
    />
  );
}
