import { dataOf, useLoad, useSubmit } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { ConfirmButton } from '../../ui/form.tsx';
import { Page, Tabs } from '../../ui/page.tsx';
import { Badge, ErrorNote, Loading } from '../../ui/status.tsx';
import { ActionEditor } from './editor.tsx';
import { ActionRun } from './run.tsx';
import { statusTone } from './types.ts';

/** `#/actions/<id>` (Edit) and `#/actions/<id>/run` (Run), with delete beside the title. */
export function ActionDetail(props: { actionId: string; tab: 'edit' | 'run' }) {
  const action = useLoad((api) => dataOf(api.client.GET('/action/info/{actionId}', { params: { path: { actionId: props.actionId } } })), [props.actionId]);
  const remove = useSubmit((api) => dataOf(api.client.DELETE('/action/delete', { body: { actionId: props.actionId } })));
  if (action.data === undefined)
    return (
      <Page title="Action">
        {action.error === undefined ? <Loading what="the action" /> : <ErrorNote error={action.error} title="This action could not be loaded" />}
        <p>
          <a href={href('actions')}>All actions</a>
        </p>
      </Page>
    );
  const data = action.data;
  return (
    <Page
      title={data.actionName}
      actions={
        <ConfirmButton
          label="Delete action"
          confirm={`Delete ${data.actionName} for good?`}
          busy={remove.busy}
          onConfirm={async () => (await remove.run()) && navigate('actions')}
        />
      }
    >
      <p class="am-meta">
        <a href={href('actions')}>All actions</a> · <code>{data.actionId}</code> · <Badge tone={statusTone(data.status)}>{data.status}</Badge> ·{' '}
        {data.visibility}
      </p>
      <ErrorNote error={remove.error} />
      <Tabs
        label="Action"
        tabs={[
          { href: href('actions', data.actionId), label: 'Edit', current: props.tab === 'edit' },
          { href: href('actions', data.actionId, 'run'), label: 'Run', current: props.tab === 'run' },
        ]}
      />
      {props.tab === 'edit' ? <ActionEditor action={data} onSaved={action.reload} /> : <ActionRun action={data} />}
    </Page>
  );
}
