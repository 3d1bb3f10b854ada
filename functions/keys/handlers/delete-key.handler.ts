import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { keyDeletedResponse, serviceNameParams } from '../key.schema.ts';
import { deleteKey } from '../key.service.ts';

export default defineRoute({
  response: keyDeletedResponse,
  params: serviceNameParams,
  run: ({ actor, params, ports }) => deleteKey(requireFullAccess(actor), params.serviceName, ports),
});
