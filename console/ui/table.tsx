import type { ComponentChildren } from 'preact';
import { Empty } from './status.tsx';

export interface Column<T> {
  readonly header: string;
  readonly cell: (row: T) => ComponentChildren;
  /** Hidden at phone width (the row's other cells still say what it is). */
  readonly wide?: boolean;
}

/**
 * A table with a caption (for screen readers), scrolling sideways inside itself at phone width
 * instead of widening the page.
 */
export function DataTable<T>(props: {
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[] | undefined;
  rowKey: (row: T) => string;
  empty: ComponentChildren;
}) {
  if (props.rows !== undefined && props.rows.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" class={column.wide ? 'wide' : undefined} key={column.header}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(props.rows ?? []).map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td class={column.wide ? 'wide' : undefined} key={column.header}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
