import { useEffect, useState } from 'preact/hooks';
import { dataOf, useApi, useSubmit } from '../../api.ts';
import { href } from '../../router.ts';
import { Button, Select } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading, When } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import { typeLabel, type Agent } from './shared.tsx';

const PAGE_SIZE = 25;

type Listed = Omit<Agent, 'sourceCode'>;

/** `#/agents`: the caller's agents, a page at a time (the API's `nextCursor`), active or deleted. */
export function AgentList() {
  const api = useApi();
  const [status, setStatus] = useState<'active' | 'deleted'>('active');
  const [agents, setAgents] = useState<Listed[] | undefined>(undefined);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [loadingMore, setLoadingMore] = useState(false);

  const load = async (cursor: string | undefined, shown: 'active' | 'deleted') => {
    const page = await dataOf(
      api.client.GET('/agent/list', { params: { query: { visibility: 'all', status: shown, limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) } } }),
    );
    return page;
  };
  const reload = () => {
    let current = true;
    setAgents(undefined);
    setError(undefined);
    load(undefined, status).then(
      (page) => {
        if (!current) return;
        setAgents(page.agents);
        setNext(page.nextCursor);
      },
      (e: unknown) => current && setError(e),
    );
    return () => {
      current = false;
    };
  };
  useEffect(reload, [api, status]);

  const more = async () => {
    if (next === null) return;
    setLoadingMore(true);
    try {
      const page = await load(next, status);
      setAgents((shown) => [...(shown ?? []), ...page.agents]);
      setNext(page.nextCursor);
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  };

  const restore = useSubmit((api, agentId: string) => dataOf(api.client.PUT('/agent/update', { body: { agentId, status: 'active' } })));

  return (
    <Page
      title="Agents"
      lead="Python agents you chat with over HTTP, and voice agents you talk to."
      actions={
        <a class="button button-primary agent-button-link" href={href('agents', 'new')}>
          New agent
        </a>
      }
    >
      <div class="form form-inline agents-filter">
        <Select
          label="Show"
          value={status}
          onValue={(v) => setStatus(v === 'deleted' ? 'deleted' : 'active')}
          options={[
            { value: 'active', label: 'Active agents' },
            { value: 'deleted', label: 'Deleted agents' },
          ]}
        />
      </div>
      <ErrorNote error={error ?? restore.error} />
      {agents === undefined && error === undefined ? <Loading what="agents" /> : null}
      <DataTable
        caption={status === 'active' ? 'Your agents' : 'Your deleted agents'}
        rows={agents}
        rowKey={(a) => a.agentId}
        empty={
          status === 'active' ? (
            <>
              No agents yet. <a href={href('agents', 'new')}>Create your first agent</a>.
            </>
          ) : (
            'No deleted agents.'
          )
        }
        columns={[
          { header: 'Name', cell: (a) => <a href={href('agents', a.agentId)}>{a.agentName}</a> },
          { header: 'Type', cell: (a) => typeLabel(a.agentType) },
          { header: 'Visibility', cell: (a) => <Badge tone={a.visibility === 'public' ? 'warn' : 'neutral'}>{a.visibility}</Badge> },
          { header: 'Description', cell: (a) => a.description, wide: true },
          { header: 'Chats this month', cell: (a) => a.invocationsPerMonth.toLocaleString(), wide: true },
          { header: 'Created', cell: (a) => <When at={a.createdAt} />, wide: true },
          {
            header: 'Actions',
            cell: (a) =>
              a.status === 'deleted' ? (
                <Button busy={restore.busy} onClick={async () => (await restore.run(a.agentId)) && reload()}>
                  Restore {a.agentName}
                </Button>
              ) : (
                <a href={href('agents', a.agentId, 'chat')} aria-label={`${a.agentType === 'bidi' ? 'Test call with' : 'Chat with'} ${a.agentName}`}>
                  {a.agentType === 'bidi' ? 'Test call' : 'Chat'}
                </a>
              ),
          },
        ]}
      />
      {next === null ? null : (
        <p>
          <Button onClick={more} busy={loadingMore}>
            More agents
          </Button>
        </p>
      )}
    </Page>
  );
}
