import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { keyListResponse } from '../key.schema.ts';
import { listKeys } from '../key.service.ts';

export default defineRoute({
  response: keyListResponse,
  run: ({ actor, ports }) => listKeys(requireFullAccess(actor), ports),
});
