import { useMemo, useState } from 'preact/hooks';
import { dataOf, lineIssuesOf, useSubmit } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { CodeEditor } from '../../ui/code-editor.tsx';
import { Button, Checkbox, Form, Select, TextArea, TextInput } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { ErrorNote, Notice } from '../../ui/status.tsx';
import { ACTION_TEMPLATE, PARAMETER_TYPES, TEMPLATE_PARAMETERS } from './template.ts';
import type { ActionParameter, ActionRecord, ActionStatus } from './types.ts';

interface Draft {
  actionId: string;
  actionName: string;
  description: string;
  category: string;
  visibility: 'private' | 'public';
  status: ActionStatus;
  memoryMb: string;
  timeoutSec: string;
  tags: string;
  keysNeeded: string;
  parameters: ActionParameter[];
  sourceCode: string;
}

function draftOf(action: ActionRecord | undefined): Draft {
  if (action === undefined)
    return {
      actionId: '',
      actionName: '',
      description: '',
      category: 'utilities',
      visibility: 'private',
      status: 'development',
      memoryMb: '128',
      timeoutSec: '30',
      tags: '',
      keysNeeded: '',
      parameters: TEMPLATE_PARAMETERS.map((p) => ({ ...p })),
      sourceCode: ACTION_TEMPLATE,
    };
  return {
    actionId: action.actionId,
    actionName: action.actionName,
    description: action.description,
    category: action.category,
    visibility: action.visibility,
    status: action.status,
    memoryMb: String(action.memoryMb),
    timeoutSec: String(action.timeoutSec),
    tags: action.tags.join(', '),
    keysNeeded: action.keysNeeded.join(', '),
    parameters: action.parameters.map((p) => ({ ...p })),
    sourceCode: action.sourceCode ?? '',
  };
}

const words = (text: string) =>
  text
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

/** The fields both create and update send. */
function bodyOf(draft: Draft) {
  return {
    actionName: draft.actionName.trim(),
    description: draft.description.trim(),
    runtime: 'python3.12',
    category: draft.category.trim(),
    visibility: draft.visibility,
    status: draft.status,
    memoryMb: Number(draft.memoryMb),
    timeoutSec: Number(draft.timeoutSec),
    tags: words(draft.tags),
    keysNeeded: words(draft.keysNeeded),
    parameters: draft.parameters.filter((p) => p.name.trim() !== '').map((p) => ({ ...p, name: p.name.trim() })),
    sourceCode: draft.sourceCode,
  };
}

/** `#/actions/new` (no `action`), or the Edit tab of `#/actions/<id>`. */
export function ActionEditor(props: { action?: ActionRecord; onSaved?: () => void }) {
  const creating = props.action === undefined;
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.action));
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  const save = useSubmit(async (api) => {
    if (props.action === undefined)
      return dataOf(
        api.client.POST('/action/create', { body: { ...bodyOf(draft), ...(draft.actionId.trim() === '' ? {} : { actionId: draft.actionId.trim() }) } }),
      );
    return dataOf(api.client.PUT('/action/update', { body: { actionId: props.action.actionId, ...bodyOf(draft) } }));
  });
  const problems = useMemo(() => lineIssuesOf(save.error, 'sourceCode'), [save.error]);

  const form = (
    <Form
      class="form am-form"
      label={creating ? 'New action' : 'Edit action'}
      onSubmit={async () => {
        const saved = await save.run();
        if (saved === undefined) return;
        if (creating) navigate('actions', saved.actionId);
        else props.onSaved?.();
      }}
    >
      <div class="am-grid">
        <TextInput label="Name" required value={draft.actionName} onValue={set('actionName')} />
        {creating ? (
          <TextInput
            label="Action id (optional)"
            hint="act- and up to 64 letters, digits, - or _; generated when empty"
            placeholder="act-weather"
            value={draft.actionId}
            onValue={set('actionId')}
          />
        ) : null}
        <TextInput label="Category" required value={draft.category} onValue={set('category')} />
        <Select label="Runtime" value="python3.12" onValue={() => undefined} options={['python3.12']} />
        <Select label="Status" value={draft.status} onValue={(v) => set('status')(v as ActionStatus)} options={['development', 'active', 'deprecated']} />
        <Select
          label="Visibility"
          hint="Public actions out of development can be run by anyone signed in."
          value={draft.visibility}
          onValue={(v) => set('visibility')(v as Draft['visibility'])}
          options={['private', 'public']}
        />
        <Select label="Memory (MB)" value={draft.memoryMb} onValue={set('memoryMb')} options={['128', '256', '512', '1024']} />
        <TextInput label="Timeout (seconds)" type="number" min={1} max={300} required value={draft.timeoutSec} onValue={set('timeoutSec')} />
        <TextInput label="Tags" hint="Separated by commas" value={draft.tags} onValue={set('tags')} />
        <TextInput
          label="Keys needed"
          hint={'Stored key names, separated by commas: event["keys"] holds them'}
          value={draft.keysNeeded}
          onValue={set('keysNeeded')}
        />
      </div>
      <TextArea label="Description" required rows={2} value={draft.description} onValue={set('description')} />
      <ParametersEditor parameters={draft.parameters} onParameters={set('parameters')} />
      <CodeEditor
        label="Source code (Python)"
        language="python"
        hint={'Defines handler(event, context) returning {"statusCode": int, "body": any JSON}. Only allowed imports; checked when you save.'}
        value={draft.sourceCode}
        onValue={set('sourceCode')}
        problems={problems}
      />
      <ErrorNote error={save.error} title={problems.length > 0 ? 'The source checker refused the code' : undefined} />
      {!creating && save.result !== undefined ? <Notice tone="success">{save.result.message}</Notice> : null}
      <div class="am-buttons">
        <Button type="submit" variant="primary" busy={save.busy}>
          {creating ? 'Create action' : 'Save changes'}
        </Button>
        {creating ? <a href={href('actions')}>Cancel</a> : null}
      </div>
    </Form>
  );
  if (!creating) return form;
  return (
    <Page title="New action" lead="A Python function, handler(event, context), run by URL with parameters.">
      <Section title="Action">{form}</Section>
    </Page>
  );
}

/** The declared parameters: a row each (name, type, required), rows added and removed. */
function ParametersEditor(props: { parameters: ActionParameter[]; onParameters: (parameters: ActionParameter[]) => void }) {
  const change = (index: number, patch: Partial<ActionParameter>) => props.onParameters(props.parameters.map((p, i) => (i === index ? { ...p, ...patch } : p)));
  return (
    <fieldset class="am-fieldset">
      <legend>Parameters</legend>
      <p class="hint">Declared parameters make the run form; required ones missing from a run are refused before it starts.</p>
      {props.parameters.length === 0 ? <p class="muted">None declared.</p> : null}
      {props.parameters.map((parameter, index) => (
        <div class="am-parameter" role="group" aria-label={`Parameter ${index + 1}`} key={index}>
          <TextInput label={`Parameter ${index + 1} name`} value={parameter.name} onValue={(name) => change(index, { name })} />
          <Select
            label={`Parameter ${index + 1} type`}
            value={parameter.type}
            onValue={(type) => change(index, { type })}
            options={(PARAMETER_TYPES as readonly string[]).includes(parameter.type) ? PARAMETER_TYPES : [...PARAMETER_TYPES, parameter.type]}
          />
          <Checkbox label={`Parameter ${index + 1} required`} checked={parameter.required} onChecked={(required) => change(index, { required })} />
          <Button variant="link" onClick={() => props.onParameters(props.parameters.filter((_, i) => i !== index))}>
            Remove parameter {index + 1}
          </Button>
        </div>
      ))}
      <Button onClick={() => props.onParameters([...props.parameters, { name: '', type: 'string', required: false }])}>Add parameter</Button>
    </fieldset>
  );
}
