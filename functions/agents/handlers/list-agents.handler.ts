import { defineRoute } from '../../core/http/route.ts';
import { agentListResponse, listAgentsQuery } from '../agent.schema.ts';
import { listAgents } from '../agent.service.ts';

export default defineRoute({
  response: agentListResponse,
  query: listAgentsQuery,
  run: ({ actor, query, ports, urls }) => listAgents(actor, query, ports, urls),
});
