import { useMemo, useState } from 'preact/hooks';
import { dataOf, useLoad, useSubmit, type Api } from '../../api.ts';
import { href } from '../../router.ts';
import { CodeEditor } from '../../ui/code-editor.tsx';
import { Button, Checkbox, Form } from '../../ui/form.tsx';
import { argumentsOf, initialValues, SchemaFields, type SchemaValues } from '../../ui/mcp-schema-form.tsx';
import { Section } from '../../ui/page.tsx';
import { Badge, ErrorNote, JsonView, Notice, When } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import { parametersSchema, type ActionRecord } from './types.ts';

interface RunResult {
  statusCode: number;
  body: unknown;
  headers: Record<string, string> | undefined;
  meta: {
    requestId: string | undefined;
    executionTime: number | undefined;
    memoryMb: number | undefined;
    creditsUsed: number | undefined;
    notice: string | undefined;
  };
}

/** Runs the action through the router (`POST /action/{actionId}` with the parameters as its JSON body). */
async function runAction(api: Api, actionId: string, body: Record<string, unknown>): Promise<RunResult> {
  const answer = await api.client.POST('/action/{actionId}', { params: { path: { actionId } }, body });
  // A failure throws the API's error (code, message, request id) as every other call does.
  const data = await dataOf(Promise.resolve(answer));
  const meta = answer.data?.meta ?? {};
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    statusCode: data.statusCode,
    body: data.body,
    headers: data.headers,
    meta: {
      requestId: text(meta['requestId']),
      executionTime: number(meta['executionTime']),
      memoryMb: number(meta['memoryMb']),
      creditsUsed: number(meta['creditsUsed']),
      notice: text(meta['notice']),
    },
  };
}

/** The Run tab: the parameters (fields from the declared ones, or a JSON body), the result, the run's record. */
export function ActionRun(props: { action: ActionRecord }) {
  const schema = useMemo(() => parametersSchema(props.action.parameters), [props.action.parameters]);
  const declared = props.action.parameters.length > 0;
  const [asJson, setAsJson] = useState(!declared);
  const [values, setValues] = useState<SchemaValues>(() => initialValues(schema));
  const [json, setJson] = useState('{}');
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [jsonError, setJsonError] = useState<string | undefined>(undefined);
  const runs = useLoad(
    (api) => dataOf(api.client.GET('/logs', { params: { query: { resourceId: props.action.actionId, pageSize: '10', timeRange: '168' } } })),
    [props.action.actionId],
  );
  const run = useSubmit((api, body: Record<string, unknown>) => runAction(api, props.action.actionId, body));

  const bodyToRun = (): Record<string, unknown> | undefined => {
    if (!asJson) {
      const { args, errors } = argumentsOf(schema, values);
      setFieldErrors(errors);
      return Object.keys(errors).length === 0 ? args : undefined;
    }
    try {
      const parsed: unknown = JSON.parse(json || '{}');
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      setJsonError(undefined);
      return parsed as Record<string, unknown>;
    } catch {
      setJsonError('The body must be a JSON object, e.g. {"city": "Paris"}.');
      return undefined;
    }
  };

  return (
    <>
      <Section title="Run with parameters">
        <Form
          class="form am-form"
          label="Run action"
          onSubmit={async () => {
            const body = bodyToRun();
            if (body === undefined) return;
            // A failed run has a record too.
            await run.run(body);
            runs.reload();
          }}
        >
          {declared ? (
            <Checkbox
              label="Edit the body as JSON"
              checked={asJson}
              onChecked={(checked) => {
                if (checked) setJson(JSON.stringify(argumentsOf(schema, values).args, null, 2));
                setAsJson(checked);
              }}
            />
          ) : null}
          {asJson ? (
            <>
              <CodeEditor
                label="Parameters (JSON body)"
                language="json"
                hint="Sent as the POST body: the handler's event holds these values (and your keys under event['keys'])."
                value={json}
                onValue={setJson}
              />
              {jsonError === undefined ? null : (
                <p class="field-error" role="alert">
                  {jsonError}
                </p>
              )}
            </>
          ) : (
            <SchemaFields schema={schema} values={values} onValues={setValues} errors={fieldErrors} />
          )}
          <div class="am-buttons">
            <Button type="submit" variant="primary" busy={run.busy}>
              Run
            </Button>
          </div>
        </Form>
        <ErrorNote error={run.error} />
        {run.result === undefined ? null : <RunOutcome result={run.result} />}
      </Section>
      <Section title="Recent runs" actions={<a href={`${href('logs')}?resourceId=${encodeURIComponent(props.action.actionId)}`}>All its logs</a>}>
        <ErrorNote error={runs.error} />
        <DataTable
          caption="Recent runs of this action"
          rows={runs.data?.logs}
          rowKey={(log) => log.requestId}
          empty="No runs in the last 7 days."
          columns={[
            { header: 'When', cell: (log) => <When at={log.createdAt} /> },
            { header: 'Status', cell: (log) => <Badge tone={log.status === 'success' ? 'ok' : 'bad'}>{log.status}</Badge> },
            { header: 'Duration', cell: (log) => `${log.metrics.durationMs} ms`, wide: true },
            { header: 'Credits', cell: (log) => log.creditsUsed.toLocaleString(undefined, { maximumFractionDigits: 4 }), wide: true },
            { header: 'Record', cell: (log) => <a href={href('logs', log.requestId)}>{log.requestId}</a> },
          ]}
        />
      </Section>
    </>
  );
}

function RunOutcome(props: { result: RunResult }) {
  const { statusCode, body, headers, meta } = props.result;
  const ok = statusCode >= 200 && statusCode < 400;
  return (
    <div class="am-result" aria-label="Run result" role="region">
      <h3>Result</h3>
      {meta.notice === undefined ? null : <Notice tone="warning">{meta.notice}</Notice>}
      <p>
        Status code <Badge tone={ok ? 'ok' : 'bad'}>{statusCode}</Badge> {ok ? '(success)' : '(the handler answered an error)'}
      </p>
      <JsonView label="Response body" value={body} />
      {headers === undefined || Object.keys(headers).length === 0 ? null : <JsonView label="Response headers" value={headers} />}
      <h3>Run record</h3>
      <dl class="am-record">
        <dt>Request</dt>
        <dd>{meta.requestId === undefined ? 'not given' : <a href={href('logs', meta.requestId)}>{meta.requestId}</a>}</dd>
        <dt>Duration</dt>
        <dd>{meta.executionTime === undefined ? 'not given' : `${meta.executionTime} ms`}</dd>
        <dt>Memory</dt>
        <dd>{meta.memoryMb === undefined ? 'not given' : `${meta.memoryMb} MB`}</dd>
        <dt>Credits</dt>
        <dd>{meta.creditsUsed === undefined ? 'not given' : meta.creditsUsed.toLocaleString(undefined, { maximumFractionDigits: 4 })}</dd>
      </dl>
    </div>
  );
}
