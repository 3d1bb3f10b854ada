import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { infoResponse } from '../websites.schema.ts';
import { getInfo } from '../websites.service.ts';

export default defineRoute({
  response: infoResponse,
  run: ({ actor, ports, urls }) => getInfo(requireUser(actor), ports, urls),
});
