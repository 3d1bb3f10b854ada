import { useEffect, useRef, useState } from 'preact/hooks';
import { dataOf, lineIssuesOf, useSubmit } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { CodeEditor } from '../../ui/code-editor.tsx';
import { Button, ConfirmButton, Form, Select, TextArea, TextInput } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { ErrorNote, Notice, When } from '../../ui/status.tsx';
import { TEXT_TEMPLATE, VOICE_TEMPLATE, type Agent } from './shared.tsx';

/** How long typing must pause before the source is checked. */
const CHECK_AFTER_MS = 800;

type Problem = { line: number; message: string };
type Voice = 'voice_1' | 'voice_2' | 'voice_3';

/**
 * `#/agents/new` and an agent's edit tab: its settings (as create and update take them) and its
 * source in a code editor. The source checker's problems are marked at their lines as the user
 * types (`POST /agent/check`, after a pause, or at once with "Check"), and a save the API refuses
 * marks the lines its 400 names.
 */
export function AgentEditor(props: { agent: Agent | null; onSaved?: () => void }) {
  const existing = props.agent;
  const [agentName, setAgentName] = useState(existing?.agentName ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [agentType, setAgentType] = useState<'text' | 'bidi'>(existing?.agentType ?? 'text');
  const [visibility, setVisibility] = useState<'private' | 'public'>(existing?.visibility ?? 'private');
  const [sourceVisibility, setSourceVisibility] = useState<'visible' | 'hidden'>(existing?.sourceVisibility ?? 'visible');
  const [memoryMb, setMemoryMb] = useState(String(existing?.memoryMb ?? 1024));
  const [timeoutSec, setTimeoutSec] = useState(String(existing?.timeoutSec ?? 300));
  const [voice, setVoice] = useState<Voice>(existing?.voice ?? 'voice_1');
  const [initialPrompt, setInitialPrompt] = useState(existing?.initialPrompt ?? '');
  const [sourceCode, setSourceCode] = useState(existing?.sourceCode ?? TEXT_TEMPLATE);
  const [problems, setProblems] = useState<readonly Problem[]>([]);
  const [checkedOk, setCheckedOk] = useState(false);
  // Checks run by themselves once the user has typed in the source or asked for a check.
  const autoCheck = useRef(false);
  const latestCheck = useRef(0);

  // A new agent's template follows its type until the user changes the source.
  useEffect(() => {
    if (existing !== null || (sourceCode !== TEXT_TEMPLATE && sourceCode !== VOICE_TEMPLATE)) return;
    setSourceCode(agentType === 'bidi' ? VOICE_TEMPLATE : TEXT_TEMPLATE);
  }, [agentType]);

  const check = useSubmit(async (api, source: string, type: 'text' | 'bidi') => {
    const mine = ++latestCheck.current;
    const verdict = await dataOf(api.client.POST('/agent/check', { body: { sourceCode: source, agentType: type } }));
    // A slower answer about an older source never replaces a newer one.
    if (mine === latestCheck.current) {
      setProblems(verdict.problems);
      setCheckedOk(verdict.ok);
    }
    return verdict;
  });

  // Checked once typing pauses (and when the type changes, which changes the entry point).
  useEffect(() => {
    if (!autoCheck.current) return;
    setCheckedOk(false);
    const timer = setTimeout(() => void check.run(sourceCode, agentType), CHECK_AFTER_MS);
    return () => clearTimeout(timer);
  }, [sourceCode, agentType]);

  const numberOf = (value: string) => (value.trim() === '' ? undefined : Number(value));
  const save = useSubmit(async (api) => {
    const voiceFields = agentType === 'bidi' ? { voice } : {};
    const settings = {
      agentName: agentName.trim(),
      description: description.trim(),
      sourceCode,
      agentType,
      visibility,
      sourceVisibility,
      memoryMb: numberOf(memoryMb),
      timeoutSec: numberOf(timeoutSec),
      ...voiceFields,
    };
    const prompt = initialPrompt.trim();
    // A new agent leaves an empty opening prompt out; an update sends null to clear the stored one.
    if (existing === null)
      return dataOf(api.client.POST('/agent/create', { body: { ...settings, ...(agentType === 'bidi' && prompt !== '' ? { initialPrompt: prompt } : {}) } }));
    return dataOf(
      api.client.PUT('/agent/update', {
        body: { agentId: existing.agentId, ...settings, ...(agentType === 'bidi' ? { initialPrompt: prompt === '' ? null : prompt } : {}) },
      }),
    );
  });
  const remove = useSubmit((api, agentId: string) => dataOf(api.client.DELETE('/agent/delete', { body: { agentId } })));

  // A refused save marks the lines it names, as a check would have.
  useEffect(() => {
    const lines = lineIssuesOf(save.error, 'sourceCode');
    if (lines.length > 0) {
      latestCheck.current++;
      setProblems(lines);
      setCheckedOk(false);
    }
  }, [save.error]);

  const onSubmit = async () => {
    const saved = await save.run();
    if (saved === undefined) return;
    setProblems([]);
    if (existing === null) navigate('agents', saved.agentId);
    else props.onSaved?.();
  };

  const form = (
    <>
      <Form label={existing === null ? 'New agent' : 'Agent settings'} onSubmit={onSubmit}>
        <div class="agent-fields">
          <TextInput
            label="Name"
            required
            hint="Lowercase letters and digits with single hyphens; unique among your agents"
            value={agentName}
            onValue={setAgentName}
            spellcheck={false}
            autoComplete="off"
          />
          <Select
            label="Type"
            value={agentType}
            onValue={(v) => setAgentType(v === 'bidi' ? 'bidi' : 'text')}
            options={[
              { value: 'text', label: 'Text (chat over HTTP)' },
              { value: 'bidi', label: 'Voice (bidi, talk over a WebSocket)' },
            ]}
          />
          <Select
            label="Visibility"
            hint="Public agents can be found and chatted with by anyone signed in"
            value={visibility}
            onValue={(v) => setVisibility(v === 'public' ? 'public' : 'private')}
            options={['private', 'public']}
          />
          <Select
            label="Source visibility"
            hint="Who may read the source of a public agent"
            value={sourceVisibility}
            onValue={(v) => setSourceVisibility(v === 'hidden' ? 'hidden' : 'visible')}
            options={[
              { value: 'visible', label: 'Visible to readers' },
              { value: 'hidden', label: 'Hidden (only you)' },
            ]}
          />
          <TextInput label="Memory (MB)" type="number" min={128} max={10240} value={memoryMb} onValue={setMemoryMb} />
          <TextInput label="Timeout (seconds)" type="number" min={1} max={880} value={timeoutSec} onValue={setTimeoutSec} />
          {agentType === 'bidi' ? (
            <Select
              label="Voice"
              value={voice}
              onValue={(v) => setVoice(v === 'voice_2' || v === 'voice_3' ? v : 'voice_1')}
              options={[
                { value: 'voice_1', label: 'Voice 1: warm professional female' },
                { value: 'voice_2', label: 'Voice 2: clear friendly male' },
                { value: 'voice_3', label: 'Voice 3: British English female' },
              ]}
            />
          ) : null}
        </div>
        <TextArea label="Description" required rows={2} value={description} onValue={setDescription} />
        {agentType === 'bidi' ? (
          <TextArea
            label="Initial prompt"
            hint="Sent when a call starts so the agent speaks first; empty: it waits for the caller"
            rows={2}
            value={initialPrompt}
            onValue={setInitialPrompt}
          />
        ) : null}
        <div class="agent-source">
          <CodeEditor
            label="Source code"
            language="python"
            hint={
              agentType === 'bidi'
                ? 'Python defining create_bidi_agent(). Checked as you type; problems are marked at their lines.'
                : 'Python defining create_agent(), returning (agent, mcp_clients). Checked as you type; problems are marked at their lines.'
            }
            value={sourceCode}
            onValue={(value) => {
              if (value === sourceCode) return;
              autoCheck.current = true;
              setSourceCode(value);
            }}
            problems={problems}
          />
        </div>
        <div class="agent-editor-actions">
          <Button
            busy={check.busy}
            onClick={() => {
              autoCheck.current = true;
              void check.run(sourceCode, agentType);
            }}
          >
            Check
          </Button>
          <Button type="submit" variant="primary" busy={save.busy}>
            {existing === null ? 'Create agent' : 'Save changes'}
          </Button>
          <span class="agent-check-status" role="status">
            {check.busy
              ? 'Checking…'
              : checkedOk
                ? 'No problems found.'
                : problems.length > 0
                  ? `${problems.length} problem${problems.length === 1 ? '' : 's'} in the source.`
                  : ''}
          </span>
        </div>
      </Form>
      <ErrorNote error={check.error} title="The source could not be checked" />
      <ErrorNote error={save.error} />
      {save.result !== undefined && existing !== null ? <Notice tone="success">Saved.</Notice> : null}
    </>
  );

  if (existing === null)
    return (
      <Page title="New agent" actions={<a href={href('agents')}>All agents</a>}>
        {form}
      </Page>
    );
  return (
    <>
      <Section title="Settings and source">{form}</Section>
      <Section title="Details">
        <dl class="agent-facts">
          <dt>Agent id</dt>
          <dd>
            <code>{existing.agentId}</code>
          </dd>
          <dt>Slug</dt>
          <dd>{existing.slug === null ? 'none until you choose an alias' : <code>{existing.slug}</code>}</dd>
          <dt>Chat URL</dt>
          <dd>
            <code class="agent-url">{existing.endpointUrl}</code>
          </dd>
          <dt>Chats this month</dt>
          <dd>{existing.invocationsPerMonth.toLocaleString()}</dd>
          <dt>Created</dt>
          <dd>
            <When at={existing.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <When at={existing.updatedAt} />
          </dd>
        </dl>
      </Section>
      <Section title="Delete">
        {existing.status === 'deleted' ? (
          <p>This agent is deleted: chats with it are refused. Save it with status restored from the list of deleted agents.</p>
        ) : (
          <>
            <p class="muted">Deleting stops every chat with this agent; you can restore it later from the list of deleted agents.</p>
            <ConfirmButton
              label="Delete agent"
              confirm={`Delete ${existing.agentName}?`}
              busy={remove.busy}
              onConfirm={async () => (await remove.run(existing.agentId)) && navigate('agents')}
            />
            <ErrorNote error={remove.error} />
          </>
        )}
      </Section>
    </>
  );
}
