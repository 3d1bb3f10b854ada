import { useMemo, useState } from 'preact/hooks';
import { dataOf, lineIssuesOf, useSubmit } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { CodeEditor } from '../../ui/code-editor.tsx';
import { Button, Form, Select, TextArea, TextInput } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { ErrorNote, Notice } from '../../ui/status.tsx';
import { MCP_TEMPLATE } from './template.ts';
import type { McpServerRecord } from './types.ts';

interface Draft {
  serverName: string;
  description: string;
  visibility: 'private' | 'public';
  sourceVisibility: 'visible' | 'hidden';
  sourceCode: string;
  changeNote: string;
}

const SOURCE_HINT =
  'Node.js exporting createMcpServer(), which returns an McpServer of @modelcontextprotocol/sdk; it may load the SDK, zod and Node built-ins. Loaded and its tools listed when you save.';

/** `#/mcp/new` (no `server`), or the Server tab of `#/mcp/<id>`: saving a changed source writes the next version. */
export function McpEditor(props: { server?: McpServerRecord; onSaved?: () => void }) {
  const server = props.server;
  const creating = server === undefined;
  const [draft, setDraft] = useState<Draft>(() => ({
    serverName: server?.serverName ?? '',
    description: server?.description ?? '',
    visibility: server?.visibility ?? 'private',
    sourceVisibility: server?.sourceVisibility ?? 'visible',
    sourceCode: server === undefined ? MCP_TEMPLATE : (server.sourceCode ?? ''),
    changeNote: '',
  }));
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  // Only a changed source makes a new version; other fields change in place.
  const sourceChanged = server !== undefined && draft.sourceCode !== (server.sourceCode ?? '');
  const save = useSubmit(async (api) => {
    const common = { description: draft.description.trim(), visibility: draft.visibility, sourceVisibility: draft.sourceVisibility };
    if (server === undefined)
      return dataOf(
        api.client.POST('/mcp-admin/create', {
          body: {
            serverName: draft.serverName.trim(),
            ...common,
            sourceCode: draft.sourceCode,
            ...(draft.changeNote.trim() ? { changeNote: draft.changeNote.trim() } : {}),
          },
        }),
      );
    return dataOf(
      api.client.PUT('/mcp-admin/update', {
        body: {
          serverId: server.serverId,
          ...common,
          ...(sourceChanged ? { sourceCode: draft.sourceCode, ...(draft.changeNote.trim() ? { changeNote: draft.changeNote.trim() } : {}) } : {}),
        },
      }),
    );
  });
  const problems = useMemo(() => lineIssuesOf(save.error, 'sourceCode'), [save.error]);

  const form = (
    <Form
      class="form am-form"
      label={creating ? 'New MCP server' : 'Edit MCP server'}
      onSubmit={async () => {
        const saved = await save.run();
        if (saved === undefined) return;
        if (creating) return navigate('mcp', saved.serverId);
        setDraft((d) => ({ ...d, changeNote: '' }));
        props.onSaved?.();
      }}
    >
      <div class="am-grid">
        {creating ? (
          <TextInput
            label="Name"
            hint="Lowercase letters and digits with single hyphens; unique among your servers, part of its address"
            placeholder="weather"
            required
            value={draft.serverName}
            onValue={set('serverName')}
          />
        ) : null}
        <Select
          label="Visibility"
          hint="Public servers answer anyone; private ones only you."
          value={draft.visibility}
          onValue={(v) => set('visibility')(v as Draft['visibility'])}
          options={['private', 'public']}
        />
        <Select
          label="Source visibility"
          hint="Hidden: only you read the source."
          value={draft.sourceVisibility}
          onValue={(v) => set('sourceVisibility')(v as Draft['sourceVisibility'])}
          options={['visible', 'hidden']}
        />
      </div>
      <TextArea label="Description" required rows={2} value={draft.description} onValue={set('description')} />
      <CodeEditor
        label="Source code (Node.js)"
        language="javascript"
        hint={SOURCE_HINT}
        value={draft.sourceCode}
        onValue={set('sourceCode')}
        problems={problems}
      />
      <TextInput
        label="Change note"
        hint={
          creating
            ? 'Annotates version 1 (optional).'
            : sourceChanged
              ? `Annotates version ${server.latestVersion + 1}, which saving writes.`
              : 'Used when the source changes.'
        }
        value={draft.changeNote}
        onValue={set('changeNote')}
      />
      <ErrorNote error={save.error} title={problems.length > 0 ? 'The source was refused' : undefined} />
      {creating || save.result === undefined ? null : (
        <Notice tone="success">
          {save.result.version === null
            ? 'Saved. The source did not change, so no new version was written.'
            : `Saved as version ${save.result.version}, now live.`}
        </Notice>
      )}
      <div class="am-buttons">
        <Button type="submit" variant="primary" busy={save.busy}>
          {creating ? 'Create server' : sourceChanged ? 'Save as a new version' : 'Save changes'}
        </Button>
        {creating ? <a href={href('mcp')}>Cancel</a> : null}
      </div>
    </Form>
  );
  if (!creating) return form;
  return (
    <Page title="New MCP server" lead="Its tools are served over MCP at an endpoint of its own; the tool tester calls them from here.">
      <Section title="Server">{form}</Section>
    </Page>
  );
}
