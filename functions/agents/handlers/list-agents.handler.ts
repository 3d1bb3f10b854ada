import { defineRoute } from '../../core/http/route.ts';
import { listAgentsQuery } from '../agent.schema.ts';
import { listAgents } from '../agent.service.ts';

export default defineRoute({
  query: listAgentsQuery,
  run: ({ actor, query, ports, request }) => listAgents(actor, query, ports, request.baseUrl),
});
