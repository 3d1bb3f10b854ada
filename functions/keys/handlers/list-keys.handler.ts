import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listKeys } from '../key.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => listKeys(requireFullAccess(actor), ports),
});
