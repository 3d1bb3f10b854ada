import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../clients/typescript/src/index.ts';
import { dataOf, useLoad, useSubmit } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { href, navigate } from '../router.ts';
import { agentLabel, Facts, fieldErrorsOf, LastError, MoreButton, useCursorList, useMyAgents, type AgentChoice } from '../ui/automate-kit.tsx';
import { Button, ConfirmButton, Form, Select, TextArea, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, Empty, ErrorNote, Loading, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';
import { RecentRecords, statusTone } from './logs/log-table.tsx';

type CronJob = paths['/cron']['get']['responses']['2XX']['content']['application/json']['data']['crons'][number];

/** `#/cron` (the jobs and a form to create one) and `#/cron/<cronId>` (one job: edit, runs). */
export default function CronPage(props: PageProps) {
  const cronId = props.route.segments[1];
  return cronId === undefined ? <CronList /> : <CronDetail cronId={cronId} key={cronId} />;
}

function CronList() {
  const agents = useMyAgents();
  const jobs = useCursorList(async (api, cursor) => {
    const data = await dataOf(api.client.GET('/cron', { params: { query: { limit: 50, ...(cursor === undefined ? {} : { cursor }) } } }));
    return { items: data.crons, nextCursor: data.nextCursor };
  });
  const [created, setCreated] = useState<CronJob | null>(null);
  return (
    <Page
      title="Cron jobs"
      lead="A cron job sends a fixed prompt to one of your agents on a schedule, as you: billed and logged like a chat. The third failure in a row stops it until you resume it."
    >
      <Section title="Your cron jobs">
        <ErrorNote error={jobs.error} />
        {jobs.items === undefined && jobs.loading ? <Loading what="cron jobs" /> : null}
        <DataTable
          caption="Your cron jobs"
          rows={jobs.items}
          rowKey={(job) => job.cronId}
          empty="No cron jobs yet: create one below."
          columns={[
            { header: 'Name', cell: (job) => <a href={href('cron', job.cronId)}>{job.name}</a> },
            { header: 'Agent', cell: (job) => job.agentName ?? agentLabel(agents.data, job.agentId), wide: true },
            { header: 'Schedule', cell: (job) => <Schedule job={job} /> },
            { header: 'Status', cell: (job) => <CronStatus job={job} /> },
            { header: 'Next run', cell: (job) => <When at={job.nextRunAt} />, wide: true },
            { header: 'Last run', cell: (job) => <LastRun job={job} />, wide: true },
            // At phone width the status says how many runs failed; the job's page has the error.
            { header: 'Last error', cell: (job) => <LastError error={job.lastError} />, wide: true },
            { header: 'Actions', cell: (job) => <CronActions job={job} onChanged={jobs.reload} /> },
          ]}
        />
        <MoreButton list={jobs} what="cron jobs" />
      </Section>
      <Section title="Create a cron job">
        {created === null ? null : (
          <Notice tone="success">
            Created <a href={href('cron', created.cronId)}>{created.name}</a>: next run <When at={created.nextRunAt} />.
          </Notice>
        )}
        <CronForm
          agents={agents.data}
          agentsError={agents.error}
          onSaved={(job) => {
            setCreated(job);
            jobs.reload();
          }}
        />
      </Section>
    </Page>
  );
}

function Schedule(props: { job: Pick<CronJob, 'schedule' | 'scheduleTimezone'> }) {
  return (
    <>
      <code>{props.job.schedule}</code>
      {props.job.schedule.startsWith('cron(') ? <span class="muted"> {props.job.scheduleTimezone}</span> : null}
    </>
  );
}

function CronStatus(props: { job: Pick<CronJob, 'status' | 'consecutiveFailures'> }) {
  return (
    <>
      <Badge tone={statusTone(props.job.status)}>{props.job.status}</Badge>
      {props.job.consecutiveFailures > 0 ? <span class="muted"> {props.job.consecutiveFailures} failed in a row</span> : null}
    </>
  );
}

function LastRun(props: { job: Pick<CronJob, 'lastRunAt' | 'lastRunStatus'> }) {
  return (
    <>
      <When at={props.job.lastRunAt} />
      {props.job.lastRunStatus === null ? null : (
        <>
          {' '}
          <Badge tone={statusTone(props.job.lastRunStatus)}>{props.job.lastRunStatus}</Badge>
        </>
      )}
    </>
  );
}

/** Pause or resume, run now and delete one job; its result said beside it. */
function CronActions(props: { job: CronJob; onChanged: () => void; onDeleted?: () => void }) {
  const { job } = props;
  const setStatus = useSubmit((api, status: 'active' | 'paused') =>
    dataOf(api.client.PUT('/cron/{cronId}', { params: { path: { cronId: job.cronId } }, body: { status } })),
  );
  const runNow = useSubmit((api) => dataOf(api.client.POST('/cron/{cronId}/run', { params: { path: { cronId: job.cronId } } })));
  const remove = useSubmit((api) => dataOf(api.client.DELETE('/cron/{cronId}', { params: { path: { cronId: job.cronId } } })));
  // `ended` takes a new schedule (edit), not a resume.
  const next = job.status === 'active' ? 'paused' : job.status === 'ended' ? null : 'active';
  return (
    <div class="row-actions">
      {next === null ? null : (
        <Button
          busy={setStatus.busy}
          onClick={async () => (await setStatus.run(next)) && props.onChanged()}
          aria-label={`${next === 'paused' ? 'Pause' : 'Resume'} ${job.name}`}
        >
          {next === 'paused' ? 'Pause' : 'Resume'}
        </Button>
      )}
      <Button busy={runNow.busy} onClick={async () => (await runNow.run()) && props.onChanged()} aria-label={`Run now: ${job.name}`}>
        Run now
      </Button>
      <ConfirmButton
        label="Delete"
        confirm={`Delete ${job.name}?`}
        busy={remove.busy}
        onConfirm={async () => {
          if (await remove.run()) (props.onDeleted ?? props.onChanged)();
        }}
      />
      <ErrorNote error={setStatus.error ?? runNow.error ?? remove.error} />
      {runNow.result === undefined ? null : (
        <p class={`run-result run-${runNow.result.status}`} role="status">
          Run {runNow.result.status === 'success' ? 'succeeded' : 'failed'}
          {runNow.result.error === undefined ? '' : `: ${runNow.result.error}`} (<a href={href('logs', runNow.result.requestId)}>record</a>)
        </p>
      )}
    </div>
  );
}

/** Create (no `job`) or edit a job; the API's refusals shown under the fields they name. */
function CronForm(props: { job?: CronJob; agents: readonly AgentChoice[] | undefined; agentsError: unknown; onSaved: (job: CronJob) => void }) {
  const textAgents = (props.agents ?? []).filter((a) => a.agentType === 'text');
  const [name, setName] = useState(props.job?.name ?? '');
  const [agentId, setAgentId] = useState(props.job?.agentId ?? '');
  const [schedule, setSchedule] = useState(props.job?.schedule ?? 'rate(1 hour)');
  const [timezone, setTimezone] = useState(props.job?.scheduleTimezone ?? 'UTC');
  const [inputMessage, setInputMessage] = useState(props.job?.inputMessage ?? '');
  useEffect(() => {
    if (agentId === '' && textAgents[0] !== undefined) setAgentId(textAgents[0].agentId);
  }, [props.agents]);
  const save = useSubmit((api) => {
    const body = { name: name.trim(), agentId, schedule: schedule.trim(), scheduleTimezone: timezone.trim() || 'UTC', inputMessage };
    return props.job === undefined
      ? dataOf(api.client.POST('/cron', { body }))
      : dataOf(api.client.PUT('/cron/{cronId}', { params: { path: { cronId: props.job.cronId } }, body }));
  });
  const problems = fieldErrorsOf(save.error);
  if (props.agents !== undefined && textAgents.length === 0 && props.job === undefined)
    return (
      <Empty>
        A cron job runs one of your text agents: <a href={href('agents')}>create an agent</a> first.
      </Empty>
    );
  return (
    <Form
      label={props.job === undefined ? 'Create a cron job' : 'Edit the cron job'}
      onSubmit={async () => {
        const saved = await save.run();
        if (saved === undefined) return;
        if (props.job === undefined) {
          setName('');
          setInputMessage('');
        }
        props.onSaved(saved);
      }}
    >
      <TextInput label="Name" required maxLength={200} value={name} onValue={setName} error={problems['name']} />
      <ErrorNote error={props.agentsError} />
      <Select
        label="Agent"
        hint="The agent the prompt is sent to (your text agents)."
        value={agentId}
        onValue={setAgentId}
        options={[
          ...(agentId === '' ? [{ value: '', label: 'Choose an agent' }] : []),
          ...textAgents.map((a) => ({ value: a.agentId, label: a.agentName })),
          ...(agentId !== '' && !textAgents.some((a) => a.agentId === agentId) ? [{ value: agentId, label: agentId }] : []),
        ]}
      />
      {problems['agentId'] === undefined ? null : <p class="field-error">Agent: {problems['agentId']}</p>}
      <TextInput
        label="Schedule"
        required
        spellcheck={false}
        value={schedule}
        onValue={setSchedule}
        error={problems['schedule']}
        hint={
          <>
            <code>rate(5 minutes)</code>, <code>rate(1 hour)</code>, <code>rate(2 days)</code>, or six fields{' '}
            <code>cron(minutes hours day-of-month month day-of-week year)</code> such as <code>cron(0 8 * * ? *)</code> (one of the two days must be{' '}
            <code>?</code>).
          </>
        }
      />
      <TextInput
        label="Time zone"
        spellcheck={false}
        value={timezone}
        onValue={setTimezone}
        error={problems['scheduleTimezone']}
        hint="An IANA zone such as Europe/Paris; cron(...) schedules are read in it."
      />
      <TextArea label="Prompt" hint="Sent to the agent on each run." rows={3} value={inputMessage} onValue={setInputMessage} error={problems['inputMessage']} />
      <div class="form-buttons">
        <Button type="submit" variant="primary" busy={save.busy} disabled={agentId === ''}>
          {props.job === undefined ? 'Create cron job' : 'Save changes'}
        </Button>
      </div>
      <ErrorNote error={save.error} />
    </Form>
  );
}

function CronDetail(props: { cronId: string }) {
  const agents = useMyAgents();
  const job = useLoad((api) => dataOf(api.client.GET('/cron/{cronId}', { params: { path: { cronId: props.cronId } } })), [props.cronId]);
  const [saved, setSaved] = useState(false);
  const title = job.data?.name ?? 'Cron job';
  return (
    <Page title={title} actions={<a href={href('cron')}>All cron jobs</a>}>
      <ErrorNote error={job.error} />
      {job.data === undefined ? (
        job.error === undefined ? (
          <Loading what="the cron job" />
        ) : null
      ) : (
        <>
          <Facts
            items={[
              ['Agent', job.data.agentName ?? agentLabel(agents.data, job.data.agentId)],
              ['Schedule', <Schedule job={job.data} key="s" />],
              ['Status', <CronStatus job={job.data} key="st" />],
              ['Next run', <When at={job.data.nextRunAt} key="n" />],
              ['Last run', <LastRun job={job.data} key="l" />],
              ['Last run error', job.data.lastRunError ?? <span class="muted">none</span>],
              ['Latest failure', <LastError error={job.data.lastError} key="e" />],
              ['Created', <When at={job.data.createdAt} key="c" />],
            ]}
          />
          <CronActions job={job.data} onChanged={job.reload} onDeleted={() => navigate('cron')} />
          <Section title="Edit">
            {saved ? <Notice tone="success">Saved.</Notice> : null}
            <CronForm
              job={job.data}
              key={job.data.updatedAt}
              agents={agents.data}
              agentsError={agents.error}
              onSaved={() => {
                setSaved(true);
                job.reload();
              }}
            />
          </Section>
          <Section title="Recent runs">
            <RecentRecords resourceId={props.cronId} caption="Recent runs" empty="No runs in the last 30 days." />
          </Section>
        </>
      )}
    </Page>
  );
}
