import { dataOf, useLoad } from '../api.ts';
import { href } from '../router.ts';
import { Page, Section } from '../ui/page.tsx';
import { LogTable } from './logs/log-table.tsx';
import { DataTable } from '../ui/table.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';

/** Days of this month so far, today included (the overview counts whole UTC days back from today). */
function daysThisMonth(now = new Date()): number {
  return now.getUTCDate();
}

export default function Home() {
  const credits = useLoad((api) => dataOf(api.client.GET('/user/credits')));
  const usage = useLoad((api) => dataOf(api.client.GET('/analytics/overview', { params: { query: { days: String(daysThisMonth()) } } })));
  const runs = useLoad((api) => dataOf(api.client.GET('/logs', { params: { query: { pageSize: '10' } } })));
  return (
    <Page title="Home">
      <div class="cards">
        <div class="card">
          <h2>Credits</h2>
          {credits.data === undefined ? <Loading /> : <p class="figure">{credits.data.credits.toLocaleString()}</p>}
          {credits.data === undefined ? null : <p class="muted">{credits.data.monthlyFreeCredits.toLocaleString()} granted each month</p>}
          <ErrorNote error={credits.error} />
        </div>
        <div class="card">
          <h2>This month</h2>
          {usage.data === undefined ? (
            <Loading />
          ) : (
            <>
              <p class="figure">{usage.data.requests.toLocaleString()} runs</p>
              <p class="muted">
                {usage.data.creditsSpent.toLocaleString()} credits spent, {usage.data.errors.toLocaleString()} failed ({(usage.data.errorRate * 100).toFixed(1)}{' '}
                %)
              </p>
            </>
          )}
          <ErrorNote error={usage.error} />
        </div>
      </div>
      <Section title="Usage by kind this month">
        <DataTable
          caption="Usage by kind this month"
          rows={usage.data === undefined ? undefined : Object.entries(usage.data.byType).filter(([, figures]) => figures.requests > 0)}
          rowKey={([kind]) => kind}
          empty="No runs yet this month."
          columns={[
            { header: 'Kind', cell: ([kind]) => kind },
            { header: 'Runs', cell: ([, f]) => f.requests.toLocaleString() },
            { header: 'Failed', cell: ([, f]) => f.errors.toLocaleString() },
            { header: 'Credits', cell: ([, f]) => f.creditsSpent.toLocaleString() },
          ]}
        />
      </Section>
      <Section title="Recent runs" actions={<a href={href('logs')}>All logs</a>}>
        <ErrorNote error={runs.error} />
        <LogTable caption="Recent runs" logs={runs.data?.logs} empty="No runs yet: create an agent or an action and run it." />
      </Section>
      <Section title="Quick links">
        <ul class="links">
          <li>
            <a href={href('agents', 'new')}>Create an agent</a>
          </li>
          <li>
            <a href={href('actions', 'new')}>Create an action</a>
          </li>
          <li>
            <a href={href('knowledge')}>Upload knowledge files</a>
          </li>
          <li>
            <a href={href('account')}>Tokens and keys</a>
          </li>
        </ul>
      </Section>
    </Page>
  );
}
