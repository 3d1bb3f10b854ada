import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { actionDeletedResponse, actionIdBody } from '../action.schema.ts';
import { deleteAction } from '../action.service.ts';

export default defineRoute({
  response: actionDeletedResponse,
  body: actionIdBody,
  run: ({ actor, body, ports }) => deleteAction(requireUser(actor), body.actionId, ports),
});
