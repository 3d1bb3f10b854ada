import { defineRoute } from '../../core/http/route.ts';
import { agentCheckResponse, checkAgentBody } from '../agent.schema.ts';
import { checkAgentSourceProblems } from '../agent.service.ts';

export default defineRoute({
  response: agentCheckResponse,
  body: checkAgentBody,
  run: ({ body, ports }) => checkAgentSourceProblems(body.sourceCode, body.agentType, ports),
});
