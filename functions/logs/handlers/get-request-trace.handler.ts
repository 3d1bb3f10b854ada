import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { requestIdParams } from '../log.schema.ts';
import { getRequestTrace } from '../log.service.ts';

export default defineRoute({
  params: requestIdParams,
  run: ({ actor, params, ports }) => getRequestTrace(requireUser(actor), params.requestId, ports),
});
