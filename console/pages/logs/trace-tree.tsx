import { useMemo, useRef, useState } from 'preact/hooks';
import { href, navigate } from '../../router.ts';
import { Badge } from '../../ui/status.tsx';
import { duration, kindOf, statusTone, type LogSummary } from './log-table.tsx';

/** A node of a trace (`GET /logs/request/{id}/trace`, `/logs/trace/{id}`): one of the caller's records, or another user's hop, redacted. */
export type TraceNode =
  (LogSummary & { readonly children: readonly TraceNode[] }) | { readonly requestId: string; readonly redacted: true; readonly children: readonly TraceNode[] };

interface Row {
  readonly node: TraceNode;
  readonly level: number;
  readonly parent: string | null;
  readonly position: number;
  readonly siblings: number;
}

/** The rows a reader can reach: every node whose ancestors are all expanded, in document order. */
function visibleRows(root: TraceNode, collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  const walk = (node: TraceNode, level: number, parent: string | null, position: number, siblings: number) => {
    rows.push({ node, level, parent, position, siblings });
    if (collapsed.has(node.requestId)) return;
    node.children.forEach((child, i) => walk(child, level + 1, node.requestId, i + 1, node.children.length));
  };
  walk(root, 1, null, 1, 1);
  return rows;
}

/**
 * A trace drawn as a tree (WAI-ARIA tree pattern): each node's kind, resource, duration and status,
 * its children indented under it with connecting lines. One tab stop; arrows move (Up, Down),
 * collapse or go to the parent (Left), expand or go to the first child (Right), Home and End jump,
 * Enter opens the node's record.
 */
export function TraceTree(props: { root: TraceNode; current: string; label: string; nameOf?: (resourceId: string) => string | undefined }) {
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [focused, setFocused] = useState(props.current);
  const rows = useMemo(() => visibleRows(props.root, collapsed), [props.root, collapsed]);
  const tree = useRef<HTMLUListElement>(null);
  const active = rows.some((r) => r.node.requestId === focused) ? focused : props.root.requestId;

  const focusRow = (requestId: string) => {
    setFocused(requestId);
    queueMicrotask(() => tree.current?.querySelector<HTMLElement>(`[data-request-id="${CSS.escape(requestId)}"]`)?.focus());
  };
  const toggle = (requestId: string, open: boolean) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (open) next.delete(requestId);
      else next.add(requestId);
      return next;
    });

  const onKeyDown = (e: KeyboardEvent) => {
    const index = rows.findIndex((r) => r.node.requestId === active);
    const row = rows[index];
    if (row === undefined) return;
    const hasChildren = row.node.children.length > 0;
    const open = hasChildren && !collapsed.has(row.node.requestId);
    let handled = true;
    switch (e.key) {
      case 'ArrowDown':
        if (rows[index + 1]) focusRow(rows[index + 1]!.node.requestId);
        break;
      case 'ArrowUp':
        if (rows[index - 1]) focusRow(rows[index - 1]!.node.requestId);
        break;
      case 'ArrowRight':
        if (hasChildren && !open) toggle(row.node.requestId, true);
        else if (open) focusRow(row.node.children[0]!.requestId);
        break;
      case 'ArrowLeft':
        if (open) toggle(row.node.requestId, false);
        else if (row.parent !== null) focusRow(row.parent);
        break;
      case 'Home':
        focusRow(rows[0]!.node.requestId);
        break;
      case 'End':
        focusRow(rows[rows.length - 1]!.node.requestId);
        break;
      case 'Enter':
        if (!('redacted' in row.node)) navigate('logs', row.node.requestId);
        break;
      default:
        handled = false;
    }
    if (handled) e.preventDefault();
  };

  const render = (node: TraceNode, level: number, position: number, siblings: number) => {
    const hasChildren = node.children.length > 0;
    const open = hasChildren && !collapsed.has(node.requestId);
    const isCurrent = node.requestId === props.current;
    const redacted = 'redacted' in node;
    const name = redacted ? undefined : props.nameOf?.(node.resourceId);
    return (
      <li
        key={node.requestId}
        role="treeitem"
        class={`trace-node${isCurrent ? ' trace-current' : ''}`}
        data-request-id={node.requestId}
        tabIndex={node.requestId === active ? 0 : -1}
        aria-level={level}
        aria-posinset={position}
        aria-setsize={siblings}
        aria-expanded={hasChildren ? open : undefined}
        aria-current={isCurrent ? 'true' : undefined}
        onFocus={(e) => e.target === e.currentTarget && setFocused(node.requestId)}
      >
        <div class="trace-row">
          {hasChildren ? (
            <span
              class="trace-toggle"
              aria-hidden="true"
              onClick={(e) => {
                e.stopPropagation();
                toggle(node.requestId, !open);
              }}
            >
              {open ? '▾' : '▸'}
            </span>
          ) : (
            <span class="trace-toggle" aria-hidden="true" />
          )}
          {redacted ? (
            <span class="trace-redacted">Another user's request (hidden)</span>
          ) : (
            <>
              <span class="trace-kind">{kindOf(node)}</span>{' '}
              <a class="trace-name" href={href('logs', node.requestId)} tabIndex={-1}>
                {name ?? node.resourceId}
              </a>{' '}
              <span class="trace-duration">{duration(node.metrics.durationMs)}</span> <Badge tone={statusTone(node.status)}>{node.status}</Badge>
              {node.creditsUsed > 0 ? <span class="muted"> {`${node.creditsUsed.toLocaleString()} credit${node.creditsUsed === 1 ? '' : 's'}`}</span> : null}
              {isCurrent ? <span class="trace-here"> (this request)</span> : null}
              {node.error === null ? null : <span class="trace-error"> {`${node.error.code}: ${node.error.message}`}</span>}
            </>
          )}
        </div>
        {open ? (
          <ul role="group" class="trace-children">
            {node.children.map((child, i) => render(child, level + 1, i + 1, node.children.length))}
          </ul>
        ) : null}
      </li>
    );
  };

  return (
    <ul role="tree" aria-label={props.label} class="trace-tree" ref={tree} onKeyDown={onKeyDown}>
      {render(props.root, 1, 1, 1)}
    </ul>
  );
}
