import type { PageProps } from '../app.tsx';
import { ActionDetail } from './actions/detail.tsx';
import { ActionEditor } from './actions/editor.tsx';
import { ActionList } from './actions/list.tsx';
import { ScratchRun } from './actions/scratch.tsx';

/**
 * Actions (SPEC 4.3): `#/actions` lists them, `#/actions/new` creates one, `#/actions/<id>` edits
 * it and `#/actions/<id>/run` runs it with parameters and shows the result and the run's record;
 * `#/actions/scratch` runs code once without saving it.
 */
export default function Actions({ route }: PageProps) {
  const [, id, tab] = route.segments;
  if (id === undefined) return <ActionList />;
  if (id === 'new') return <ActionEditor />;
  if (id === 'scratch') return <ScratchRun />;
  return <ActionDetail actionId={id} tab={tab === 'run' ? 'run' : 'edit'} key={id} />;
}
