import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../clients/typescript/src/index.ts';
import { dataOf, useLoad, useSubmit } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { href, navigate } from '../router.ts';
import {
  agentLabel,
  CopyField,
  Facts,
  fieldErrorsOf,
  LastError,
  listOf,
  MoreButton,
  useCursorList,
  useMyAgents,
  type AgentChoice,
} from '../ui/automate-kit.tsx';
import { Button, Checkbox, ConfirmButton, Form, Select, TextArea, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, Empty, ErrorNote, Loading, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';
import { RecentRecords } from './logs/log-table.tsx';

type Channel = paths['/channels']['get']['responses']['2XX']['content']['application/json']['data']['channels'][number];
type Platform = Channel['platform'];
type Created = paths['/channels']['post']['responses']['2XX']['content']['application/json']['data'];

interface CredentialField {
  readonly name: string;
  readonly label: string;
  /** Secrets are typed in password fields and never shown again; the others (ids, numbers) are plain. */
  readonly secret: boolean;
  readonly optional?: boolean;
  readonly hint?: string;
}

const PHONE_FIELDS: readonly CredentialField[] = [
  { name: 'accountSid', label: 'Account SID', secret: false, hint: 'AC… from the dashboard' },
  { name: 'authToken', label: 'Auth token', secret: true },
  { name: 'phoneNumber', label: 'Phone number', secret: false, hint: 'E.164, such as +15551234567' },
];

/** The platforms and the credentials each takes (SPEC part 2, with the guide's appSecret). */
const PLATFORMS: Record<Platform, { label: string; fields: readonly CredentialField[]; setup: string }> = {
  webhook: {
    label: 'Webhook (your own system)',
    fields: [{ name: 'secret', label: 'HMAC secret', secret: true, optional: true, hint: 'Optional: deliveries must then carry X-Signature-256.' }],
    setup: 'POST {"senderId","message","messageId"} to the webhook URL; the answer is {"reply","conversationId"}.',
  },
  'workspace-chat': {
    label: 'Workspace chat (Slack kind)',
    fields: [
      { name: 'signingSecret', label: 'Signing secret', secret: true },
      { name: 'botToken', label: 'Bot token', secret: true, hint: 'xoxb-…' },
    ],
    setup: 'Paste the webhook URL as the Request URL under Event Subscriptions and subscribe to message.im and app_mention.',
  },
  'community-chat': {
    label: 'Community chat (Discord kind)',
    fields: [
      { name: 'publicKey', label: 'Public key', secret: false, hint: '64 hex characters' },
      { name: 'botToken', label: 'Bot token', secret: true },
    ],
    setup: 'Paste the webhook URL as the Interactions Endpoint URL.',
  },
  'bot-messenger': {
    label: 'Bot messenger (Telegram kind)',
    fields: [{ name: 'botToken', label: 'Bot token', secret: true }],
    setup: 'Nothing to paste: creating the channel registers its webhook URL with the platform.',
  },
  'phone-messenger': {
    label: 'Phone messenger (WhatsApp kind)',
    fields: [
      { name: 'verifyToken', label: 'Verify token', secret: true, hint: 'Any string you choose; enter the same one at Meta.' },
      { name: 'accessToken', label: 'Access token', secret: true },
      { name: 'phoneNumberId', label: 'Phone number id', secret: false },
      { name: 'appSecret', label: 'App secret', secret: true },
    ],
    setup: 'Set the Callback URL to the webhook URL, with the same verify token, and subscribe to messages.',
  },
  'phone-voice': { label: 'Phone calls', fields: PHONE_FIELDS, setup: 'Paste the webhook URL under “A call comes in” (POST). Needs a voice agent.' },
  'phone-sms': { label: 'Phone SMS', fields: PHONE_FIELDS, setup: 'Paste the webhook URL under “A message comes in” (POST).' },
  'phone-unified': {
    label: 'Phone calls and SMS',
    fields: PHONE_FIELDS,
    setup: 'Paste the webhook URL under both “A call comes in” and “A message comes in”.',
  },
};

const isPhone = (platform: Platform) => platform === 'phone-voice' || platform === 'phone-sms' || platform === 'phone-unified';

/** `#/channels` (the channels and a form to create one) and `#/channels/<channelId>` (one channel). */
export default function ChannelsPage(props: PageProps) {
  const channelId = props.route.segments[1];
  return channelId === undefined ? <ChannelList /> : <ChannelDetail channelId={channelId} key={channelId} />;
}

/** Where a channel answers in group chats: the create and edit forms offer the same choices. */
const GROUP_POLICIES = [
  { value: 'disabled', label: 'Not in groups' },
  { value: 'allowlist', label: 'Only the groups listed' },
  { value: 'open', label: 'Any group' },
] as const;

function ChannelList() {
  const agents = useMyAgents();
  const channels = useCursorList(async (api, cursor) => {
    const data = await dataOf(api.client.GET('/channels', { params: { query: { limit: 50, ...(cursor === undefined ? {} : { cursor }) } } }));
    return { items: data.channels, nextCursor: data.nextCursor };
  });
  const [created, setCreated] = useState<Created | null>(null);
  return (
    <Page
      title="Channels"
      lead="A channel puts one of your agents on a chat platform, a phone number or a plain webhook: the platform calls the channel's webhook URL."
    >
      <Section title="Your channels">
        <ErrorNote error={channels.error} />
        {channels.items === undefined && channels.loading ? <Loading what="channels" /> : null}
        <DataTable
          caption="Your channels"
          rows={channels.items}
          rowKey={(c) => c.channelId}
          empty="No channels yet: create one below."
          columns={[
            { header: 'Name', cell: (c) => <a href={href('channels', c.channelId)}>{c.name}</a> },
            { header: 'Platform', cell: (c) => PLATFORMS[c.platform]?.label ?? c.platform, wide: true },
            { header: 'Agent', cell: (c) => agentLabel(agents.data, c.agentId), wide: true },
            { header: 'Status', cell: (c) => <ChannelStatus channel={c} /> },
            { header: 'Last error', cell: (c) => <LastError error={c.lastError} />, wide: true },
            { header: 'Actions', cell: (c) => <ChannelActions channel={c} onChanged={channels.reload} /> },
          ]}
        />
        <MoreButton list={channels} what="channels" />
      </Section>
      <Section title="Create a channel">
        {created === null ? null : (
          <div class="note note-success created" role="status">
            <p>
              Created <a href={href('channels', created.channelId)}>{created.name}</a>. {PLATFORMS[created.platform].setup}
            </p>
            <CopyField label={`Webhook URL of ${created.name}`} value={created.webhookUrl} />
          </div>
        )}
        <CreateChannel
          agents={agents.data}
          agentsError={agents.error}
          onCreated={(channel) => {
            setCreated(channel);
            channels.reload();
          }}
        />
      </Section>
    </Page>
  );
}

function ChannelStatus(props: { channel: Pick<Channel, 'status' | 'failureCount' | 'pausedReason'> }) {
  const { channel } = props;
  return (
    <>
      <Badge tone={channel.status === 'active' ? 'ok' : 'neutral'}>{channel.status}</Badge>
      {channel.pausedReason === null ? null : <span class="muted"> {channel.pausedReason}</span>}
      {channel.failureCount > 0 ? <span class="muted"> {channel.failureCount} failed</span> : null}
    </>
  );
}

function ChannelActions(props: { channel: Channel; onChanged: () => void; onDeleted?: () => void }) {
  const { channel } = props;
  const setStatus = useSubmit((api, status: 'active' | 'paused') =>
    dataOf(api.client.PUT('/channels/{channelId}', { params: { path: { channelId: channel.channelId } }, body: { status } })),
  );
  const remove = useSubmit((api) => dataOf(api.client.DELETE('/channels/{channelId}', { params: { path: { channelId: channel.channelId } } })));
  const next = channel.status === 'active' ? 'paused' : 'active';
  return (
    <div class="row-actions">
      <Button
        busy={setStatus.busy}
        onClick={async () => (await setStatus.run(next)) && props.onChanged()}
        aria-label={`${next === 'paused' ? 'Pause' : 'Resume'} ${channel.name}`}
      >
        {next === 'paused' ? 'Pause' : 'Resume'}
      </Button>
      <ConfirmButton
        label="Delete"
        confirm={`Delete ${channel.name}?`}
        busy={remove.busy}
        onConfirm={async () => {
          if (await remove.run()) (props.onDeleted ?? props.onChanged)();
        }}
      />
      <ErrorNote error={setStatus.error ?? remove.error} />
    </div>
  );
}

/** Credential inputs of a platform; secrets as password fields, cleared once sent. */
function CredentialInputs(props: {
  platform: Platform;
  values: Record<string, string>;
  onValues: (values: Record<string, string>) => void;
  problems: Record<string, string>;
}) {
  return (
    <fieldset class="credentials">
      <legend>Credentials</legend>
      <p class="hint">Stored encrypted; secrets are never shown again (only their last characters).</p>
      {PLATFORMS[props.platform].fields.map((field) => (
        <TextInput
          key={`${props.platform}:${field.name}`}
          label={`${field.label}${field.optional ? ' (optional)' : ''}`}
          type={field.secret ? 'password' : 'text'}
          autoComplete={field.secret ? 'new-password' : 'off'}
          spellcheck={false}
          required={!field.optional}
          hint={field.hint}
          value={props.values[field.name] ?? ''}
          onValue={(value) => props.onValues({ ...props.values, [field.name]: value })}
          error={props.problems[`platformConfig.${field.name}`]}
        />
      ))}
    </fieldset>
  );
}

/** The credentials as the API takes them: empty optional fields left out. */
function configOf(platform: Platform, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(PLATFORMS[platform].fields.flatMap((f) => (values[f.name] ? [[f.name, f.secret ? values[f.name]! : values[f.name]!.trim()]] : [])));
}

function CreateChannel(props: { agents: readonly AgentChoice[] | undefined; agentsError: unknown; onCreated: (channel: Created) => void }) {
  const [name, setName] = useState('');
  const [platform, setPlatform] = useState<Platform>('webhook');
  const [agentId, setAgentId] = useState('');
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [allowedSenders, setAllowedSenders] = useState('');
  const [groupPolicy, setGroupPolicy] = useState<Channel['groupPolicy']>('disabled');
  const [allowedGroups, setAllowedGroups] = useState('');
  const [requireMention, setRequireMention] = useState(false);
  const agents = props.agents ?? [];
  useEffect(() => {
    if (agentId === '' && agents[0] !== undefined) setAgentId(agents[0].agentId);
  }, [props.agents]);
  const create = useSubmit((api) =>
    dataOf(
      api.client.POST('/channels', {
        body: {
          name: name.trim(),
          platform,
          agentId,
          platformConfig: configOf(platform, credentials),
          allowedSenders: listOf(allowedSenders),
          groupPolicy,
          allowedGroups: listOf(allowedGroups),
          requireMention,
        },
      }),
    ),
  );
  const problems = fieldErrorsOf(create.error);
  if (props.agents !== undefined && agents.length === 0)
    return (
      <Empty>
        A channel answers with one of your agents: <a href={href('agents')}>create an agent</a> first.
      </Empty>
    );
  return (
    <Form
      label="Create a channel"
      onSubmit={async () => {
        const created = await create.run();
        // The secrets leave the page as soon as the API has them (or has refused them).
        setCredentials({});
        if (created === undefined) return;
        setName('');
        props.onCreated(created);
      }}
    >
      <TextInput label="Name" required maxLength={200} value={name} onValue={setName} error={problems['name']} />
      <Select
        label="Platform"
        hint={PLATFORMS[platform].setup}
        value={platform}
        onValue={(value) => {
          setPlatform(value as Platform);
          setCredentials({});
        }}
        options={(Object.keys(PLATFORMS) as Platform[]).map((p) => ({ value: p, label: PLATFORMS[p].label }))}
      />
      <ErrorNote error={props.agentsError} />
      <Select
        label="Agent"
        hint={platform === 'phone-voice' ? 'Calls need a voice agent.' : 'The agent that answers.'}
        value={agentId}
        onValue={setAgentId}
        options={agents.map((a) => ({ value: a.agentId, label: `${a.agentName}${a.agentType === 'bidi' ? ' (voice)' : ''}` }))}
      />
      {problems['agentId'] === undefined ? null : <p class="field-error">Agent: {problems['agentId']}</p>}
      <CredentialInputs platform={platform} values={credentials} onValues={setCredentials} problems={problems} />
      {problems['platformConfig'] === undefined ? null : <p class="field-error">Credentials: {problems['platformConfig']}</p>}
      <details class="more-options">
        <summary>Who may talk to it</summary>
        <TextArea
          label="Allowed senders"
          hint="Platform user ids, one a line or separated by commas; empty: anyone."
          rows={2}
          value={allowedSenders}
          onValue={setAllowedSenders}
          error={problems['allowedSenders']}
        />
        <Select label="Groups" value={groupPolicy} onValue={(v) => setGroupPolicy(v as Channel['groupPolicy'])} options={GROUP_POLICIES} />
        {groupPolicy === 'allowlist' ? <TextArea label="Allowed groups" rows={2} value={allowedGroups} onValue={setAllowedGroups} /> : null}
        <Checkbox label="In groups, answer only when mentioned" checked={requireMention} onChecked={setRequireMention} />
      </details>
      <div class="form-buttons">
        <Button type="submit" variant="primary" busy={create.busy} disabled={agentId === ''}>
          Create channel
        </Button>
      </div>
      <ErrorNote error={create.error} />
    </Form>
  );
}

function ChannelDetail(props: { channelId: string }) {
  const agents = useMyAgents();
  const channel = useLoad((api) => dataOf(api.client.GET('/channels/{channelId}', { params: { path: { channelId: props.channelId } } })), [props.channelId]);
  const c = channel.data;
  return (
    <Page title={c?.name ?? 'Channel'} actions={<a href={href('channels')}>All channels</a>}>
      <ErrorNote error={channel.error} />
      {c === undefined ? (
        channel.error === undefined ? (
          <Loading what="the channel" />
        ) : null
      ) : (
        <>
          <Facts
            items={[
              ['Platform', PLATFORMS[c.platform]?.label ?? c.platform],
              ['Agent', agentLabel(agents.data, c.agentId)],
              ['Status', <ChannelStatus channel={c} key="s" />],
              ['Latest failure', <LastError error={c.lastError} key="e" />],
              ['Credentials', <MaskedConfig config={c.platformConfig} key="c" />],
              ['Allowed senders', c.allowedSenders.length === 0 ? 'anyone' : c.allowedSenders.join(', ')],
              [
                'Groups',
                `${c.groupPolicy}${c.allowedGroups.length > 0 ? ` (${c.allowedGroups.join(', ')})` : ''}${c.requireMention ? ', only when mentioned' : ''}`,
              ],
              ['Created', <When at={c.createdAt} key="w" />],
            ]}
          />
          <CopyField label="Webhook URL" value={c.webhookUrl} hint={PLATFORMS[c.platform]?.setup} />
          <ChannelActions channel={c} onChanged={channel.reload} onDeleted={() => navigate('channels')} />
          <TestChannel channelId={c.channelId} />
          {c.platform === 'phone-sms' || c.platform === 'phone-unified' ? <SendMessage channelId={c.channelId} /> : null}
          {c.platform === 'phone-voice' || c.platform === 'phone-unified' ? <CallNumber channelId={c.channelId} /> : null}
          <MutedSenders channelId={c.channelId} />
          <EditChannel channel={c} agents={agents.data} onSaved={channel.reload} />
          <Section title="Recent deliveries and failures">
            <RecentRecords resourceId={c.channelId} caption="Recent records of the channel" empty="No records in the last 30 days." />
          </Section>
        </>
      )}
    </Page>
  );
}

function MaskedConfig(props: { config: Record<string, string> }) {
  const entries = Object.entries(props.config);
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="plain-list">
      {entries.map(([field, value]) => (
        <li key={field}>
          {field}: <code>{value}</code>
        </li>
      ))}
    </ul>
  );
}

function TestChannel(props: { channelId: string }) {
  const [message, setMessage] = useState('Hello');
  const test = useSubmit((api) =>
    dataOf(api.client.POST('/channels/{channelId}/test', { params: { path: { channelId: props.channelId } }, body: { message } })),
  );
  return (
    <Section title="Test">
      <p class="muted">Sends a prompt to the channel's agent, as a delivery would, and shows its answer.</p>
      <Form label="Test the channel" class="form form-inline" onSubmit={() => test.run()}>
        <TextInput label="Test message" required value={message} onValue={setMessage} />
        <Button type="submit" busy={test.busy}>
          Send test
        </Button>
      </Form>
      <ErrorNote error={test.error} />
      {test.result === undefined ? null : (
        <div class="note note-success" role="status">
          <strong>The agent answered</strong>
          <p class="reply">{test.result.response}</p>
        </div>
      )}
    </Section>
  );
}

function SendMessage(props: { channelId: string }) {
  const [to, setTo] = useState('');
  const [message, setMessage] = useState('');
  const send = useSubmit((api) =>
    dataOf(api.client.POST('/channels/{channelId}/send', { params: { path: { channelId: props.channelId } }, body: { to: to.trim(), message } })),
  );
  const problems = fieldErrorsOf(send.error);
  return (
    <Section title="Send a message">
      <p class="muted">A message from you, without the agent.</p>
      <Form label="Send a message" onSubmit={async () => (await send.run()) && setMessage('')}>
        <TextInput label="To" hint="E.164, such as +15550001111" required value={to} onValue={setTo} error={problems['to']} />
        <TextArea label="Message" required rows={2} value={message} onValue={setMessage} error={problems['message']} />
        <div class="form-buttons">
          <Button type="submit" busy={send.busy}>
            Send
          </Button>
        </div>
      </Form>
      <ErrorNote error={send.error} />
      {send.result === undefined ? null : <Notice tone="success">Sent to {send.result.to}.</Notice>}
    </Section>
  );
}

function CallNumber(props: { channelId: string }) {
  const [to, setTo] = useState('');
  const call = useSubmit((api) =>
    dataOf(api.client.POST('/channels/{channelId}/call', { params: { path: { channelId: props.channelId } }, body: { to: to.trim() } })),
  );
  return (
    <Section title="Call a number">
      <Form label="Call a number" class="form form-inline" onSubmit={() => call.run()}>
        <TextInput label="Number to call" hint="E.164" required value={to} onValue={setTo} error={fieldErrorsOf(call.error)['to']} />
        <Button type="submit" busy={call.busy}>
          Call
        </Button>
      </Form>
      <ErrorNote error={call.error} />
      {call.result === undefined ? null : (
        <Notice tone="success">
          Calling {call.result.to}: {call.result.status}.
        </Notice>
      )}
    </Section>
  );
}

function MutedSenders(props: { channelId: string }) {
  const muted = useLoad(
    (api) => dataOf(api.client.GET('/channels/{channelId}/muted-senders', { params: { path: { channelId: props.channelId } } })),
    [props.channelId],
  );
  const [senderId, setSenderId] = useState('');
  const [reason, setReason] = useState('');
  const mute = useSubmit((api) =>
    dataOf(
      api.client.POST('/channels/{channelId}/mute-sender', { params: { path: { channelId: props.channelId } }, body: { senderId: senderId.trim(), reason } }),
    ),
  );
  const unmute = useSubmit((api, id: string) =>
    dataOf(api.client.POST('/channels/{channelId}/unmute-sender', { params: { path: { channelId: props.channelId } }, body: { senderId: id } })),
  );
  return (
    <Section title="Muted senders">
      <p class="muted">A muted sender's messages are still accepted, but the agent does not answer: a person can take over the conversation.</p>
      <Form
        label="Mute a sender"
        class="form form-inline"
        onSubmit={async () => {
          if (await mute.run()) {
            setSenderId('');
            setReason('');
            muted.reload();
          }
        }}
      >
        <TextInput label="Sender id" required value={senderId} onValue={setSenderId} />
        <TextInput label="Reason" value={reason} onValue={setReason} />
        <Button type="submit" busy={mute.busy}>
          Mute
        </Button>
      </Form>
      <ErrorNote error={mute.error ?? unmute.error ?? muted.error} />
      <DataTable
        caption="Muted senders"
        rows={muted.data?.mutedSenders}
        rowKey={(m) => m.senderId}
        empty="No muted senders."
        columns={[
          { header: 'Sender', cell: (m) => <code>{m.senderId}</code> },
          { header: 'Reason', cell: (m) => m.reason || <span class="muted">none given</span> },
          { header: 'Muted', cell: (m) => <When at={m.mutedAt} />, wide: true },
          {
            header: 'Actions',
            cell: (m) => (
              <Button busy={unmute.busy} onClick={async () => (await unmute.run(m.senderId)) && muted.reload()} aria-label={`Unmute ${m.senderId}`}>
                Unmute
              </Button>
            ),
          },
        ]}
      />
    </Section>
  );
}

function EditChannel(props: { channel: Channel; agents: readonly AgentChoice[] | undefined; onSaved: () => void }) {
  const { channel } = props;
  const [name, setName] = useState(channel.name);
  const [agentId, setAgentId] = useState(channel.agentId);
  const [allowedSenders, setAllowedSenders] = useState(channel.allowedSenders.join('\n'));
  const [groupPolicy, setGroupPolicy] = useState(channel.groupPolicy);
  const [allowedGroups, setAllowedGroups] = useState(channel.allowedGroups.join('\n'));
  const [requireMention, setRequireMention] = useState(channel.requireMention);
  const [initialPrompt, setInitialPrompt] = useState(channel.initialPrompt ?? '');
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [replaceCredentials, setReplaceCredentials] = useState(false);
  const save = useSubmit((api) =>
    dataOf(
      api.client.PUT('/channels/{channelId}', {
        params: { path: { channelId: channel.channelId } },
        body: {
          name: name.trim(),
          agentId,
          allowedSenders: listOf(allowedSenders),
          groupPolicy,
          allowedGroups: listOf(allowedGroups),
          requireMention,
          ...(isPhone(channel.platform) ? { initialPrompt: initialPrompt.trim() || null } : {}),
          ...(replaceCredentials ? { platformConfig: configOf(channel.platform, credentials) } : {}),
        },
      }),
    ),
  );
  const problems = fieldErrorsOf(save.error);
  const agents = props.agents ?? [];
  return (
    <Section title="Edit">
      <Form
        label="Edit the channel"
        onSubmit={async () => {
          const saved = await save.run();
          setCredentials({});
          if (saved !== undefined) {
            setReplaceCredentials(false);
            props.onSaved();
          }
        }}
      >
        <TextInput label="Name" required value={name} onValue={setName} error={problems['name']} />
        <Select
          label="Agent"
          value={agentId}
          onValue={setAgentId}
          options={[
            ...agents.map((a) => ({ value: a.agentId, label: `${a.agentName}${a.agentType === 'bidi' ? ' (voice)' : ''}` })),
            ...(agents.some((a) => a.agentId === agentId) ? [] : [{ value: agentId, label: agentId }]),
          ]}
        />
        {problems['agentId'] === undefined ? null : <p class="field-error">Agent: {problems['agentId']}</p>}
        <TextArea label="Allowed senders" hint="One a line; empty: anyone." rows={2} value={allowedSenders} onValue={setAllowedSenders} />
        <Select label="Groups" value={groupPolicy} onValue={(v) => setGroupPolicy(v as Channel['groupPolicy'])} options={GROUP_POLICIES} />
        {groupPolicy === 'allowlist' ? <TextArea label="Allowed groups" rows={2} value={allowedGroups} onValue={setAllowedGroups} /> : null}
        <Checkbox label="In groups, answer only when mentioned" checked={requireMention} onChecked={setRequireMention} />
        {isPhone(channel.platform) ? (
          <TextArea label="Opening prompt" hint="Voice calls: overrides the agent's own." rows={2} value={initialPrompt} onValue={setInitialPrompt} />
        ) : null}
        <Checkbox label="Replace the credentials" checked={replaceCredentials} onChecked={setReplaceCredentials} />
        {replaceCredentials ? <CredentialInputs platform={channel.platform} values={credentials} onValues={setCredentials} problems={problems} /> : null}
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
