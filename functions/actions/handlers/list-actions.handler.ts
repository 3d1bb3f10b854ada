import { defineRoute } from '../../core/http/route.ts';
import { actionListResponse, listActionsQuery } from '../action.schema.ts';
import { listActions } from '../action.service.ts';

export default defineRoute({
  response: actionListResponse,
  query: listActionsQuery,
  run: ({ actor, query, ports, urls }) => listActions(actor, query, ports, urls),
});
