import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { keyStoredResponse, storeKeyBody } from '../key.schema.ts';
import { storeKey } from '../key.service.ts';

export default defineRoute({
  response: keyStoredResponse,
  body: storeKeyBody,
  run: ({ actor, body, ports }) => storeKey(requireFullAccess(actor), body, ports),
});
