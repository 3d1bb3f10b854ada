import { defineRoute } from '../../core/http/route.ts';
import { listActionsQuery } from '../action.schema.ts';
import { listActions } from '../action.service.ts';

export default defineRoute({
  query: listActionsQuery,
  run: ({ actor, query, ports, urls }) => listActions(actor, query, ports, urls),
});
