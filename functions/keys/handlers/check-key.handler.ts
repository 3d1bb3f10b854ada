import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { keyCheckResponse, serviceNameParams } from '../key.schema.ts';
import { checkKey } from '../key.service.ts';

export default defineRoute({
  response: keyCheckResponse,
  params: serviceNameParams,
  run: ({ actor, params, ports }) => checkKey(requireUser(actor), params.serviceName, ports),
});
