import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../clients/typescript/src/index.ts';
import { dataOf, useSubmit } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { href } from '../router.ts';
import { agentLabel, Facts, fieldErrorsOf, listOf, MoreButton, useCursorList, useMyAgents, type AgentChoice } from '../ui/automate-kit.tsx';
import { Button, Checkbox, ConfirmButton, Form, SecretOnce, Select, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, Empty, ErrorNote, Loading, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';

type Embed = paths['/embed/list']['get']['responses']['2XX']['content']['application/json']['data']['tokens'][number];
type Created = paths['/embed/create']['post']['responses']['2XX']['content']['application/json']['data'];
type WidgetConfig = NonNullable<NonNullable<paths['/embed/create']['post']['requestBody']>['content']['application/json']['config']>;

/** `#/embeds` (tokens, create with the snippet and a live preview) and `#/embeds/<embedTokenId>` (edit one). */
export default function EmbedsPage(props: PageProps) {
  const embedTokenId = props.route.segments[1];
  return embedTokenId === undefined ? <EmbedList /> : <EmbedDetail embedTokenId={embedTokenId} key={embedTokenId} />;
}

function useEmbeds() {
  return useCursorList(async (api, cursor) => {
    const data = await dataOf(api.client.GET('/embed/list', { params: { query: { limit: 50, ...(cursor === undefined ? {} : { cursor }) } } }));
    return { items: data.tokens, nextCursor: data.nextCursor };
  });
}

function EmbedList() {
  const agents = useMyAgents();
  const embeds = useEmbeds();
  const [created, setCreated] = useState<Created | null>(null);
  return (
    <Page
      title="Embeds"
      lead="An embed token puts a chat with your agents on a website with one script tag. It is publishable: it works only from the domains you list, and its limits cap what visitors spend."
    >
      <Section title="Your embed tokens">
        <ErrorNote error={embeds.error} />
        {embeds.items === undefined && embeds.loading ? <Loading what="embed tokens" /> : null}
        <EmbedTable embeds={embeds.items} agents={agents.data} onChanged={embeds.reload} />
        <MoreButton list={embeds} what="embed tokens" />
      </Section>
      <Section title="Create an embed token">
        {created === null ? null : <CreatedEmbed created={created} />}
        <EmbedForm
          agents={agents.data}
          agentsError={agents.error}
          onCreated={(embed) => {
            setCreated(embed);
            embeds.reload();
          }}
        />
      </Section>
    </Page>
  );
}

function EmbedTable(props: { embeds: readonly Embed[] | undefined; agents: readonly AgentChoice[] | undefined; onChanged: () => void }) {
  return (
    <DataTable
      caption="Your embed tokens"
      rows={props.embeds}
      rowKey={(e) => e.embedTokenId}
      empty="No embed tokens yet: create one below."
      columns={[
        {
          header: 'Token',
          cell: (e) => (
            <a href={href('embeds', e.embedTokenId)}>
              <code>{e.tokenPrefix}…</code>
            </a>
          ),
        },
        {
          header: 'Agents',
          cell: (e) => (
            <>
              {e.agentId === null ? null : <span>Text: {agentLabel(props.agents, e.agentId)} </span>}
              {e.voiceAgentId === null ? null : <span>Voice: {agentLabel(props.agents, e.voiceAgentId)}</span>}
            </>
          ),
          wide: true,
        },
        { header: 'Domains', cell: (e) => e.allowedDomains.join(', '), wide: true },
        { header: 'Status', cell: (e) => <Badge tone={e.status === 'active' ? 'ok' : 'neutral'}>{e.status}</Badge> },
        {
          header: 'Credits used',
          cell: (e) => `${e.creditsUsed.toLocaleString()} of ${e.creditLimit === null ? 'unlimited' : e.creditLimit.toLocaleString()}`,
          wide: true,
        },
        { header: 'Created', cell: (e) => <When at={e.createdAt} />, wide: true },
        { header: 'Actions', cell: (e) => <EmbedActions embed={e} onChanged={props.onChanged} /> },
      ]}
    />
  );
}

/** Revoke (the API's DELETE, a soft revoke) or restore one token. */
function EmbedActions(props: { embed: Embed; onChanged: () => void }) {
  const { embed } = props;
  const revoke = useSubmit((api) => dataOf(api.client.DELETE('/embed/{embedTokenId}', { params: { path: { embedTokenId: embed.embedTokenId } } })));
  const restore = useSubmit((api) =>
    dataOf(api.client.PUT('/embed/{embedTokenId}', { params: { path: { embedTokenId: embed.embedTokenId } }, body: { status: 'active' } })),
  );
  return (
    <div class="row-actions">
      {embed.status === 'active' ? (
        <ConfirmButton
          label="Revoke"
          confirm={`Revoke ${embed.tokenPrefix}…? The widget stops at once.`}
          busy={revoke.busy}
          onConfirm={async () => (await revoke.run()) && props.onChanged()}
        />
      ) : (
        <Button busy={restore.busy} onClick={async () => (await restore.run()) && props.onChanged()} aria-label={`Restore ${embed.tokenPrefix}`}>
          Restore
        </Button>
      )}
      <ErrorNote error={revoke.error ?? restore.error} />
    </div>
  );
}

/** The snippet, shown once (it holds the token), and the widget running with it. */
function CreatedEmbed(props: { created: Created }) {
  return (
    <div class="created-embed">
      <SecretOnce label="Embed snippet" value={props.created.snippet} />
      <p class="muted">Paste it into a page served from one of: {props.created.allowedDomains.join(', ')}.</p>
      <WidgetPreview snippet={props.created.snippet} allowedDomains={props.created.allowedDomains} />
    </div>
  );
}

/**
 * The widget as a visitor sees it: the snippet in a sandboxed frame of its own. The frame has the
 * console's origin, so the token must allow this host for the widget to get its configuration.
 */
export function WidgetPreview(props: { snippet: string; allowedDomains: readonly string[] }) {
  // The widget keeps its visitor under a key naming the embed token, in the storage of the page it
  // runs on: here the console's own. The console keeps no token in storage, so the preview's key
  // goes when the preview does, or when the page is left or reloaded.
  useEffect(() => {
    addEventListener('pagehide', forgetPreviewVisitors);
    return () => {
      removeEventListener('pagehide', forgetPreviewVisitors);
      forgetPreviewVisitors();
    };
  }, []);
  const host = location.hostname;
  const allowed = props.allowedDomains.some((d) => d === '*' || d.replace(/:\d+$/, '') === host || (d.startsWith('*.') && host.endsWith(d.slice(1))));
  const doc = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Widget preview</title>',
    '<style>body{font-family:system-ui,sans-serif;margin:16px;color:#16181d;background:#fff}</style></head>',
    '<body><h1 style="font-size:18px">Your page</h1><p>The widget appears in a corner, as on your site.</p>',
    props.snippet,
    '</body></html>',
  ].join('');
  return (
    <Section title="Live preview">
      {allowed ? null : (
        <Notice tone="warning">
          This token does not allow {host}, the console's host, so the widget below cannot load its configuration. Add {host} to its allowed domains to try it
          here.
        </Notice>
      )}
      {/* allow-forms: the widget's message box is a form (its submit is handled by the widget, never sent). */}
      <iframe class="widget-preview" title="Widget preview" sandbox="allow-scripts allow-same-origin allow-forms" allow="microphone" srcdoc={doc} />
    </Section>
  );
}

/** Removes what widgets in a preview kept in the console's session storage (`svc-visitor:<embed token>`). */
function forgetPreviewVisitors() {
  for (const key of Object.keys(sessionStorage)) if (key.startsWith('svc-visitor:')) sessionStorage.removeItem(key);
}

function EmbedForm(props: { agents: readonly AgentChoice[] | undefined; agentsError: unknown; onCreated: (embed: Created) => void }) {
  const agents = props.agents ?? [];
  const textAgents = agents.filter((a) => a.agentType === 'text');
  const voiceAgents = agents.filter((a) => a.agentType === 'bidi');
  const [agentId, setAgentId] = useState('');
  const [voiceAgentId, setVoiceAgentId] = useState('');
  const [domains, setDomains] = useState('localhost');
  const [allowHere, setAllowHere] = useState(true);
  const [limits, setLimits] = useState<LimitValues>({ rateLimitPerDay: '1000', rateLimitPerIp: '10', creditLimit: '', minutesLimit: '' });
  const [config, setConfig] = useState<ConfigValues>({
    greeting: '',
    color: '#6366f1',
    position: 'bottom-right',
    size: 'standard',
    title: '',
    placeholder: '',
  });
  useEffect(() => {
    if (agentId === '' && voiceAgentId === '' && textAgents[0] !== undefined) setAgentId(textAgents[0].agentId);
  }, [props.agents]);
  const here = location.host;
  const create = useSubmit((api) => {
    const allowedDomains = listOf(domains);
    if (allowHere && !allowedDomains.includes(here)) allowedDomains.push(here);
    return dataOf(
      api.client.POST('/embed/create', {
        body: {
          ...(agentId === '' ? {} : { agentId }),
          ...(voiceAgentId === '' ? {} : { voiceAgentId }),
          allowedDomains,
          ...limitsBody(limits),
          config: configBody(config),
        },
      }),
    );
  });
  const problems = fieldErrorsOf(create.error);
  if (props.agents !== undefined && agents.length === 0)
    return (
      <Empty>
        An embed chats with one of your agents: <a href={href('agents')}>create an agent</a> first.
      </Empty>
    );
  return (
    <Form
      label="Create an embed token"
      onSubmit={async () => {
        const created = await create.run();
        if (created !== undefined) props.onCreated(created);
      }}
    >
      <ErrorNote error={props.agentsError} />
      <Select
        label="Text agent"
        value={agentId}
        onValue={setAgentId}
        options={[{ value: '', label: 'None' }, ...textAgents.map((a) => ({ value: a.agentId, label: a.agentName }))]}
      />
      {problems['agentId'] === undefined ? null : <p class="field-error">Text agent: {problems['agentId']}</p>}
      <Select
        label="Voice agent"
        hint="At least one of the two; with both, the widget has a text and a voice tab."
        value={voiceAgentId}
        onValue={setVoiceAgentId}
        options={[{ value: '', label: 'None' }, ...voiceAgents.map((a) => ({ value: a.agentId, label: a.agentName }))]}
      />
      {problems['voiceAgentId'] === undefined ? null : <p class="field-error">Voice agent: {problems['voiceAgentId']}</p>}
      <TextInput
        label="Allowed domains"
        hint="Hosts the widget may run on, separated by commas: a host, host:port, *.domain for its subdomains, or * for any."
        spellcheck={false}
        value={domains}
        onValue={setDomains}
        error={problems['allowedDomains']}
      />
      <Checkbox label={`Also allow ${here}, so the live preview here works`} checked={allowHere} onChecked={setAllowHere} />
      <LimitInputs values={limits} onValues={setLimits} problems={problems} />
      <ConfigInputs values={config} onValues={setConfig} problems={problems} />
      <div class="form-buttons">
        <Button type="submit" variant="primary" busy={create.busy} disabled={agentId === '' && voiceAgentId === ''}>
          Create embed token
        </Button>
      </div>
      <ErrorNote error={create.error} />
    </Form>
  );
}

interface LimitValues {
  rateLimitPerDay: string;
  rateLimitPerIp: string;
  creditLimit: string;
  minutesLimit: string;
}

function limitsBody(values: LimitValues) {
  const whole = (text: string) => (text.trim() === '' ? null : Number(text));
  return {
    ...(values.rateLimitPerDay.trim() === '' ? {} : { rateLimitPerDay: Number(values.rateLimitPerDay) }),
    ...(values.rateLimitPerIp.trim() === '' ? {} : { rateLimitPerIp: Number(values.rateLimitPerIp) }),
    creditLimit: whole(values.creditLimit),
    minutesLimit: whole(values.minutesLimit),
  };
}

function LimitInputs(props: { values: LimitValues; onValues: (values: LimitValues) => void; problems: Record<string, string> }) {
  const set = (key: keyof LimitValues) => (value: string) => props.onValues({ ...props.values, [key]: value });
  return (
    <fieldset class="form-group">
      <legend>Limits</legend>
      <TextInput
        label="Visitors' sessions a day"
        type="number"
        min={1}
        value={props.values.rateLimitPerDay}
        onValue={set('rateLimitPerDay')}
        error={props.problems['rateLimitPerDay']}
      />
      <TextInput
        label="Sessions a day per address"
        type="number"
        min={1}
        value={props.values.rateLimitPerIp}
        onValue={set('rateLimitPerIp')}
        error={props.problems['rateLimitPerIp']}
      />
      <TextInput
        label="Credit limit"
        type="number"
        min={0}
        hint="Empty: unlimited"
        value={props.values.creditLimit}
        onValue={set('creditLimit')}
        error={props.problems['creditLimit']}
      />
      <TextInput
        label="Voice minutes limit"
        type="number"
        min={0}
        hint="Empty: unlimited"
        value={props.values.minutesLimit}
        onValue={set('minutesLimit')}
        error={props.problems['minutesLimit']}
      />
    </fieldset>
  );
}

interface ConfigValues {
  greeting: string;
  color: string;
  position: 'bottom-right' | 'bottom-left';
  size: 'compact' | 'standard' | 'large';
  title: string;
  placeholder: string;
}

function configBody(values: ConfigValues): WidgetConfig {
  return {
    ...(values.greeting.trim() === '' ? {} : { greeting: values.greeting.trim() }),
    ...(values.color.trim() === '' ? {} : { color: values.color.trim() }),
    position: values.position,
    size: values.size,
    ...(values.title.trim() === '' ? {} : { title: values.title.trim() }),
    ...(values.placeholder.trim() === '' ? {} : { placeholder: values.placeholder.trim() }),
  };
}

function ConfigInputs(props: { values: ConfigValues; onValues: (values: ConfigValues) => void; problems: Record<string, string> }) {
  const set =
    <K extends keyof ConfigValues>(key: K) =>
    (value: string) =>
      props.onValues({ ...props.values, [key]: value as ConfigValues[K] });
  const p = (field: string) => props.problems[`config.${field}`] ?? props.problems[field];
  return (
    <fieldset class="form-group">
      <legend>Look</legend>
      <TextInput label="Greeting" hint="The first bubble in text mode." value={props.values.greeting} onValue={set('greeting')} error={p('greeting')} />
      <TextInput label="Header title" value={props.values.title} onValue={set('title')} error={p('title')} />
      <TextInput label="Colour" hint="Hex, such as #0f766e" spellcheck={false} value={props.values.color} onValue={set('color')} error={p('color')} />
      <Select
        label="Position"
        value={props.values.position}
        onValue={set('position')}
        options={[
          { value: 'bottom-right', label: 'Bottom right' },
          { value: 'bottom-left', label: 'Bottom left' },
        ]}
      />
      <Select
        label="Size"
        value={props.values.size}
        onValue={set('size')}
        options={[
          { value: 'compact', label: 'Compact (340 × 480)' },
          { value: 'standard', label: 'Standard (400 × 580)' },
          { value: 'large', label: 'Large (440 × 640)' },
        ]}
      />
      <TextInput label="Input placeholder" value={props.values.placeholder} onValue={set('placeholder')} error={p('placeholder')} />
    </fieldset>
  );
}

function EmbedDetail(props: { embedTokenId: string }) {
  const agents = useMyAgents();
  // The API has no read of one token: it is found in the caller's list.
  const embeds = useEmbeds();
  const embed = embeds.items?.find((e) => e.embedTokenId === props.embedTokenId);
  useEffect(() => {
    if (embed === undefined && embeds.hasMore && !embeds.loading) embeds.more();
  }, [embeds.items, embeds.loading]);
  const notFound = embed === undefined && embeds.items !== undefined && !embeds.hasMore && !embeds.loading;
  return (
    <Page title={embed === undefined ? 'Embed token' : `Embed token ${embed.tokenPrefix}…`} actions={<a href={href('embeds')}>All embed tokens</a>}>
      <ErrorNote error={embeds.error} />
      {notFound ? <Empty>No embed token of yours has this id.</Empty> : null}
      {embed === undefined ? (
        notFound || embeds.error !== undefined ? null : (
          <Loading what="the embed token" />
        )
      ) : (
        <>
          <Facts
            items={[
              [
                'Status',
                <Badge tone={embed.status === 'active' ? 'ok' : 'neutral'} key="s">
                  {embed.status}
                </Badge>,
              ],
              ['Text agent', agentLabel(agents.data, embed.agentId)],
              ['Voice agent', agentLabel(agents.data, embed.voiceAgentId)],
              ['Mode', embed.config.mode],
              ['Allowed domains', embed.allowedDomains.join(', ')],
              ['Credits used', `${embed.creditsUsed.toLocaleString()} of ${embed.creditLimit === null ? 'unlimited' : embed.creditLimit.toLocaleString()}`],
              [
                'Voice minutes used',
                `${embed.minutesUsed.toLocaleString()} of ${embed.minutesLimit === null ? 'unlimited' : embed.minutesLimit.toLocaleString()}`,
              ],
              ['Created', <When at={embed.createdAt} key="c" />],
            ]}
          />
          <p class="muted">
            The snippet holds the token, which was shown only when it was created. To get a new one, create another token and revoke this one.
          </p>
          <EmbedActions embed={embed} onChanged={embeds.reload} />
          <EditEmbed embed={embed} key={`${embed.embedTokenId}:${embed.status}`} onSaved={embeds.reload} />
        </>
      )}
    </Page>
  );
}

function EditEmbed(props: { embed: Embed; onSaved: () => void }) {
  const { embed } = props;
  const [domains, setDomains] = useState(embed.allowedDomains.join(', '));
  const [limits, setLimits] = useState<LimitValues>({
    rateLimitPerDay: String(embed.rateLimitPerDay),
    rateLimitPerIp: String(embed.rateLimitPerIp),
    creditLimit: embed.creditLimit === null ? '' : String(embed.creditLimit),
    minutesLimit: embed.minutesLimit === null ? '' : String(embed.minutesLimit),
  });
  const [config, setConfig] = useState<ConfigValues>({
    greeting: embed.config.greeting ?? '',
    color: embed.config.color,
    position: embed.config.position,
    size: embed.config.size,
    title: embed.config.title ?? '',
    placeholder: embed.config.placeholder,
  });
  const save = useSubmit((api) =>
    dataOf(
      api.client.PUT('/embed/{embedTokenId}', {
        params: { path: { embedTokenId: embed.embedTokenId } },
        body: { allowedDomains: listOf(domains), ...limitsBody(limits), config: configBody(config) },
      }),
    ),
  );
  const problems = fieldErrorsOf(save.error);
  return (
    <Section title="Edit">
      <Form label="Edit the embed token" onSubmit={async () => (await save.run()) && props.onSaved()}>
        <TextInput
          label="Allowed domains"
          hint="Separated by commas."
          spellcheck={false}
          value={domains}
          onValue={setDomains}
          error={problems['allowedDomains']}
        />
        <LimitInputs values={limits} onValues={setLimits} problems={problems} />
        <ConfigInputs values={config} onValues={setConfig} problems={problems} />
        <div class="form-buttons">
          <Button type="submit" variant="primary" busy={save.busy}>
            Save changes
          </Button>
        </div>
        <ErrorNote error={save.error} />
        {save.result === undefined ? null : <Notice tone="success">Saved.</Notice>}
      </Form>
    </Section>
  );
}
