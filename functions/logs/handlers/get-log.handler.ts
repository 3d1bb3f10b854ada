import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { requestIdParams } from '../log.schema.ts';
import { getLog } from '../log.service.ts';

export default defineRoute({
  params: requestIdParams,
  run: ({ actor, params, ports, log }) => getLog(requireUser(actor), params.requestId, { ...ports, log }),
});
