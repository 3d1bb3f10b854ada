import { useEffect, useId, useState } from 'preact/hooks';
import { dataOf, useApi, useLoad, useSubmit } from '../../api.ts';
import { href } from '../../router.ts';
import { Button, Form, Select } from '../../ui/form.tsx';
import { argumentsOf, initialValues, SchemaFields, type SchemaValues } from '../../ui/mcp-schema-form.tsx';
import { Section } from '../../ui/page.tsx';
import { ErrorNote, JsonView, Loading, Notice } from '../../ui/status.tsx';
import { endpointOf, mcpRequest, type McpContent, type McpTool } from './rpc.ts';
import type { McpServerRecord } from './types.ts';

interface CallResult {
  content?: McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * The Tools tab: `tools/list` over MCP (at the live version, or the one `?v=N` pins), a tool picked,
 * a form from its input schema, and `tools/call` with what the tool answered.
 */
export function McpTools(props: { server: McpServerRecord; pinned: number | null }) {
  const api = useApi();
  const serverId = props.server.serverId;
  const url = endpointOf(api, serverId, props.pinned);
  const versions = useLoad((a) => dataOf(a.client.GET('/mcp-admin/{serverId}/versions', { params: { path: { serverId } } })), [serverId]);
  const tools = useLoad((a) => mcpRequest<{ tools: McpTool[] }>(a, url, 'tools/list'), [url]);
  const [picked, setPicked] = useState<string | null>(null);
  const list = tools.data?.result.tools ?? [];
  useEffect(() => setPicked((current) => (list.some((t) => t.name === current) ? current : (list[0]?.name ?? null))), [tools.data]);
  const tool = list.find((t) => t.name === picked);
  const groupId = useId();

  return (
    <>
      <Section title="Endpoint">
        <div class="form form-inline">
          <Select
            label="Version to call"
            hint="Pinning adds v=N to the endpoint, so calls run that version's source."
            value={props.pinned === null ? '' : String(props.pinned)}
            onValue={(v) => (location.hash = `${href('mcp', serverId, 'tools').slice(1)}${v === '' ? '' : `?v=${v}`}`)}
            options={[
              { value: '', label: `Live (version ${props.server.latestVersion})` },
              ...(versions.data?.versions ?? []).map((v) => ({ value: String(v.version), label: `Version ${v.version}, pinned` })),
              ...(props.pinned !== null && !(versions.data?.versions ?? []).some((v) => v.version === props.pinned)
                ? [{ value: String(props.pinned), label: `Version ${props.pinned}, pinned` }]
                : []),
            ]}
          />
          <Button onClick={tools.reload} busy={tools.loading}>
            List tools again
          </Button>
        </div>
        <p class="am-meta">
          POST <code class="am-url">{url}</code>
          {tools.data === undefined || tools.data.version === null ? null : <> · answered by version {tools.data.version}</>}
        </p>
      </Section>
      <Section title="Tools">
        <ErrorNote error={tools.error} title="tools/list failed" />
        {tools.loading && tools.data === undefined ? <Loading what="the tools over MCP" /> : null}
        {tools.data !== undefined && list.length === 0 ? <p class="empty">This version has no tools.</p> : null}
        {list.length === 0 ? null : (
          <fieldset class="am-fieldset am-tools">
            <legend>Tool</legend>
            {list.map((t) => (
              <div class="am-tool" key={t.name}>
                <input
                  type="radio"
                  name={`${groupId}-tool`}
                  id={`${groupId}-${t.name}`}
                  checked={t.name === picked}
                  onChange={() => setPicked(t.name)}
                  aria-describedby={t.description === undefined ? undefined : `${groupId}-${t.name}-about`}
                />
                <label for={`${groupId}-${t.name}`}>{t.title ?? t.name}</label>
                {t.description === undefined ? null : (
                  <span class="hint" id={`${groupId}-${t.name}-about`}>
                    {t.description}
                  </span>
                )}
              </div>
            ))}
          </fieldset>
        )}
      </Section>
      {tool === undefined ? null : <ToolCall url={url} tool={tool} key={`${url} ${tool.name}`} />}
    </>
  );
}

function ToolCall(props: { url: string; tool: McpTool }) {
  const schema = props.tool.inputSchema;
  const [values, setValues] = useState<SchemaValues>(() => initialValues(schema));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const call = useSubmit((api, args: Record<string, unknown>) =>
    mcpRequest<CallResult>(api, props.url, 'tools/call', { name: props.tool.name, arguments: args }),
  );
  return (
    <Section title={`Call ${props.tool.name}`}>
      <Form
        label={`Call ${props.tool.name}`}
        onSubmit={async () => {
          const { args, errors: problems } = argumentsOf(schema, values);
          setErrors(problems);
          if (Object.keys(problems).length === 0) await call.run(args);
        }}
      >
        <SchemaFields schema={schema} values={values} onValues={setValues} errors={errors} />
        <p class="hint">Each call costs 1 credit.</p>
        <div class="am-buttons">
          <Button type="submit" variant="primary" busy={call.busy}>
            Call tool
          </Button>
        </div>
      </Form>
      <ErrorNote error={call.error} title="tools/call failed" />
      {call.result === undefined ? null : <ToolResult result={call.result.result} version={call.result.version} />}
    </Section>
  );
}

function ToolResult(props: { result: CallResult; version: number | null }) {
  const content = props.result.content ?? [];
  return (
    <div class="am-result" role="region" aria-label="Tool result">
      <h3>Result{props.version === null ? '' : ` (version ${props.version})`}</h3>
      {props.result.isError ? <Notice tone="warning">The tool answered with an error (isError).</Notice> : <Notice tone="success">The tool answered.</Notice>}
      {content.map((item, index) => {
        if (item.type === 'text' && typeof item.text === 'string')
          return (
            <pre class="json am-text" key={index} tabIndex={0} aria-label={`Text content ${index + 1}`}>
              {item.text}
            </pre>
          );
        if (item.type === 'image' && typeof item.data === 'string' && typeof item.mimeType === 'string' && item.mimeType.startsWith('image/'))
          return <img class="am-image" key={index} src={`data:${item.mimeType};base64,${item.data}`} alt={`Image content ${index + 1} from the tool`} />;
        return <JsonView key={index} label={`${item.type} content ${index + 1}`} value={item} />;
      })}
      {props.result.structuredContent === undefined ? null : <JsonView label="Structured content" value={props.result.structuredContent} />}
      <details>
        <summary>The whole answer</summary>
        <JsonView label="The whole tools/call result" value={props.result} />
      </details>
    </div>
  );
}
