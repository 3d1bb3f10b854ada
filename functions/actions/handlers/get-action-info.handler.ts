import { defineRoute } from '../../core/http/route.ts';
import { actionIdParams, actionResponse } from '../action.schema.ts';
import { getActionInfo } from '../action.service.ts';

export default defineRoute({
  response: actionResponse,
  params: actionIdParams,
  run: ({ actor, params, ports, urls }) => getActionInfo(actor, params.actionId, ports, urls),
});
