import { defineRoute } from '../../core/http/route.ts';
import { actionCreatedResponse, createActionBody } from '../action.schema.ts';
import { createAction } from '../action.service.ts';

export default defineRoute({
  response: actionCreatedResponse,
  body: createActionBody,
  run: ({ actor, body, ports }) => createAction(actor, body, ports),
});
