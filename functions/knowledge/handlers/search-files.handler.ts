import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { searchBody } from '../knowledge.schema.ts';
import { searchFiles } from '../knowledge.service.ts';

export default defineRoute({
  body: searchBody,
  run: ({ actor, body, ports }) => searchFiles(requireUser(actor), body, ports),
});
