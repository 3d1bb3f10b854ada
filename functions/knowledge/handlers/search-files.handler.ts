import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { searchBody, searchResponse } from '../knowledge.schema.ts';
import { searchFiles } from '../knowledge.service.ts';

export default defineRoute({
  response: searchResponse,
  body: searchBody,
  run: ({ actor, body, ports }) => searchFiles(requireUser(actor), body, ports),
});
