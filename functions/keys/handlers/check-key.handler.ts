import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { serviceNameParams } from '../key.schema.ts';
import { checkKey } from '../key.service.ts';

export default defineRoute({
  params: serviceNameParams,
  run: ({ actor, params, ports }) => checkKey(requireUser(actor), params.serviceName, ports),
});
