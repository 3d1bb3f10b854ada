import { useState } from 'preact/hooks';
import { dataOf, lineIssuesOf, useSubmit } from '../../api.ts';
import { href } from '../../router.ts';
import { CodeEditor } from '../../ui/code-editor.tsx';
import { Button, Form, TextInput } from '../../ui/form.tsx';
import { Page, Section } from '../../ui/page.tsx';
import { ErrorNote, JsonView } from '../../ui/status.tsx';

const SCRATCH = `def handler(event, context):
    return {"statusCode": 200, "body": {"you sent": event}}
`;

/**
 * `#/actions/scratch`: runs Python once without creating an action
 * (`POST /action/python-128mb/inline-code`), with an event, a timeout and a memory size.
 */
export function ScratchRun() {
  const [code, setCode] = useState(SCRATCH);
  const [event, setEvent] = useState('{\n  "a": 1\n}');
  const [timeoutSec, setTimeoutSec] = useState('10');
  const [memory, setMemory] = useState('128');
  const [eventError, setEventError] = useState<string | undefined>(undefined);
  const run = useSubmit(async (api) => {
    const parsed: unknown = JSON.parse(event);
    const answer = await api.client.POST('/action/python-128mb/inline-code', {
      body: { code, event: parsed as Record<string, unknown>, timeout: Number(timeoutSec), memory: Number(memory) },
    });
    return { data: await dataOf(Promise.resolve(answer)), meta: answer.data?.meta };
  });
  return (
    <Page
      title="Run code once"
      actions={<a href={href('actions')}>All actions</a>}
      lead="Runs a handler once, as an action would run, without saving it. Billed as one run."
    >
      <Form
        label="Run code once"
        onSubmit={async () => {
          try {
            const parsed: unknown = JSON.parse(event);
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('must be a JSON object');
            setEventError(undefined);
          } catch (error) {
            setEventError(`Event ${(error as Error).message}`);
            return;
          }
          await run.run();
        }}
      >
        <CodeEditor label="Code" language="python" value={code} onValue={setCode} problems={lineIssuesOf(run.error, 'code')} />
        <CodeEditor
          label="Event (JSON object)"
          language="json"
          value={event}
          onValue={setEvent}
          problems={eventError === undefined ? [] : [{ line: 1, message: eventError }]}
        />
        <div class="form form-inline">
          <TextInput label="Timeout (seconds)" type="number" min={1} max={900} value={timeoutSec} onValue={setTimeoutSec} />
          <TextInput label="Memory (MB)" type="number" min={128} value={memory} onValue={setMemory} />
        </div>
        <Button type="submit" variant="primary" busy={run.busy}>
          Run
        </Button>
      </Form>
      <ErrorNote error={run.error} />
      {run.result === undefined ? null : (
        <Section title="Result">
          <p>
            Status <strong>{run.result.data.statusCode}</strong>
            {run.result.meta?.['requestId'] === undefined ? null : (
              <>
                {' '}
                · <a href={href('logs', String(run.result.meta['requestId']))}>its record</a>
              </>
            )}
          </p>
          <JsonView label="Body" value={run.result.data.body} />
        </Section>
      )}
    </Page>
  );
}
