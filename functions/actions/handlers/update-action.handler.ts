import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { actionUpdatedResponse, updateActionBody } from '../action.schema.ts';
import { updateAction } from '../action.service.ts';

export default defineRoute({
  response: actionUpdatedResponse,
  body: updateActionBody,
  run: ({ actor, body, ports, urls }) => updateAction(requireUser(actor), body, ports, urls),
});
