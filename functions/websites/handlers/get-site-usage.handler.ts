import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { usageResponse } from '../websites.schema.ts';
import { getUsage } from '../websites.service.ts';

export default defineRoute({
  response: usageResponse,
  run: ({ actor, ports }) => getUsage(requireUser(actor), ports),
});
