import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { traceIdParams, traceResponse } from '../log.schema.ts';
import { getTrace } from '../log.service.ts';

export default defineRoute({
  response: traceResponse,
  params: traceIdParams,
  run: ({ actor, params, ports }) => getTrace(requireUser(actor), params.traceId, ports),
});
