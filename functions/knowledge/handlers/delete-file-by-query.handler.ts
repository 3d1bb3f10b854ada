import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteResponse, keyBody } from '../knowledge.schema.ts';
import { deleteFile } from '../knowledge.service.ts';

/** `GET /knowledge/delete?key=...`: SPEC 4.6's `ANY /knowledge/delete` for a client that sends no body. */
export default defineRoute({
  response: deleteResponse,
  query: keyBody,
  run: ({ actor, query, ports }) => deleteFile(requireUser(actor), query, ports),
});
