import { defineRoute } from '../../core/http/route.ts';
import { executionResponse, inlineCodeBody } from '../action.schema.ts';
import { runInlineCode } from '../execution.service.ts';

/** `POST /action/python-128mb/inline-code`: `{code, event, timeout, memory}`, run once without creating an action. */
export default defineRoute({
  response: executionResponse,
  body: inlineCodeBody,
  run: (ctx) => runInlineCode(ctx, ctx.body, ctx.ports),
});
