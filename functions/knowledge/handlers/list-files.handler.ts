import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listQuery, listResponse } from '../knowledge.schema.ts';
import { listFiles } from '../knowledge.service.ts';

export default defineRoute({
  response: listResponse,
  query: listQuery,
  run: ({ actor, query, ports }) => listFiles(requireUser(actor), query, ports),
});
