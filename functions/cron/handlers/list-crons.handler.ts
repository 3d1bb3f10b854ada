import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { cronListResponse, listCronsQuery } from '../cron.schema.ts';
import { listCrons } from '../cron.service.ts';

export default defineRoute({
  response: cronListResponse,
  query: listCronsQuery,
  run: ({ actor, query, ports }) => listCrons(requireUser(actor), query, ports),
});
