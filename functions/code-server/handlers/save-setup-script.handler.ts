import { defineRoute } from '../../core/http/route.ts';
import { saveSetupScriptBody, setupScriptSavedResponse } from '../code-server.schema.ts';
import { saveSetupScript } from '../code-server.service.ts';

export default defineRoute({
  response: setupScriptSavedResponse,
  body: saveSetupScriptBody,
  run: (ctx) => saveSetupScript(ctx, ctx.body.setupScript, ctx.ports),
});
