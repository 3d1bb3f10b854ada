import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { requestIdParams, traceResponse } from '../log.schema.ts';
import { getRequestTrace } from '../log.service.ts';

export default defineRoute({
  response: traceResponse,
  params: requestIdParams,
  run: ({ actor, params, ports }) => getRequestTrace(requireUser(actor), params.requestId, ports),
});
