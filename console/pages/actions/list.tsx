import { useEffect, useState } from 'preact/hooks';
import { dataOf, useApi } from '../../api.ts';
import { href } from '../../router.ts';
import { Button, Form, Select, TextInput } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import { statusTone, type ActionRecord } from './types.ts';

type StatusFilter = '' | 'active' | 'development' | 'deprecated';

/** The signed-in user's actions, a page at a time, filtered as `/action/list` allows. */
export function ActionList() {
  const api = useApi();
  const [nameContains, setNameContains] = useState('');
  const [status, setStatus] = useState<StatusFilter>('');
  const [filter, setFilter] = useState<{ nameContains: string; status: StatusFilter }>({ nameContains: '', status: '' });
  const [rows, setRows] = useState<ActionRecord[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const load = async (after: string | null) => {
    setBusy(true);
    setError(undefined);
    try {
      const page = await dataOf(
        api.client.GET('/action/list', {
          params: {
            query: {
              visibility: 'all',
              limit: 50,
              ...(filter.nameContains.trim() === '' ? {} : { nameContains: filter.nameContains.trim() }),
              ...(filter.status === '' ? {} : { status: filter.status }),
              ...(after === null ? {} : { cursor: after }),
            },
          },
        }),
      );
      setRows((previous) => (after === null ? page.actions : [...(previous ?? []), ...page.actions]));
      setCursor(page.nextCursor);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [api, filter]);

  return (
    <Page
      title="Actions"
      lead="Small Python functions you run by URL, with parameters, from agents or from here."
      actions={
        <>
          <a class="button" href={href('actions', 'scratch')}>
            Run code once
          </a>
          <a class="button button-primary" href={href('actions', 'new')}>
            New action
          </a>
        </>
      }
    >
      <Form label="Filter actions" class="form form-inline" onSubmit={() => setFilter({ nameContains, status })}>
        <TextInput label="Name contains" type="search" value={nameContains} onValue={setNameContains} />
        <Select
          label="Status"
          value={status}
          onValue={(v) => setStatus(v as StatusFilter)}
          options={[{ value: '', label: 'Any' }, 'active', 'development', 'deprecated']}
        />
        <Button type="submit">Filter</Button>
      </Form>
      <Section title="Your actions">
        <ErrorNote error={error} />
        {rows === undefined && error === undefined ? <Loading what="actions" /> : null}
        <DataTable
          caption="Your actions"
          rows={rows}
          rowKey={(a) => a.actionId}
          empty={
            filter.nameContains === '' && filter.status === '' ? (
              <>
                No actions yet. <a href={href('actions', 'new')}>Create your first action</a>.
              </>
            ) : (
              'No action matches.'
            )
          }
          columns={[
            { header: 'Name', cell: (a) => <a href={href('actions', a.actionId)}>{a.actionName}</a> },
            { header: 'Id', cell: (a) => <code>{a.actionId}</code>, wide: true },
            { header: 'Status', cell: (a) => <Badge tone={statusTone(a.status)}>{a.status}</Badge> },
            { header: 'Visibility', cell: (a) => a.visibility, wide: true },
            { header: 'Category', cell: (a) => a.category, wide: true },
            {
              header: 'Run',
              cell: (a) => (
                <a href={href('actions', a.actionId, 'run')} aria-label={`Run ${a.actionName}`}>
                  Run
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
