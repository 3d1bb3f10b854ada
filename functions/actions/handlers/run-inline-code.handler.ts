import { defineRoute } from '../../core/http/route.ts';
import { inlineCodeBody } from '../action.schema.ts';
import { runInlineCode } from '../execution.service.ts';

/** `POST /action/python-128mb/inline-code`: `{code, event, timeout, memory}`, run once without creating an action. */
export default defineRoute({
  body: inlineCodeBody,
  run: ({ actor, body, ports, lineage, log, signal }) => runInlineCode(actor, body, { ...ports, log }, lineage, signal),
});
