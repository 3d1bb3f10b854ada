import { defineRoute } from '../../core/http/route.ts';
import { listAgentsQuery } from '../agent.schema.ts';
import { listAgents } from '../agent.service.ts';

export default defineRoute({
  query: listAgentsQuery,
  run: ({ actor, query, ports, urls }) => listAgents(actor, query, ports, urls),
});
