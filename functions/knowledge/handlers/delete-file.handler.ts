import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteResponse, keyBody } from '../knowledge.schema.ts';
import { deleteFile } from '../knowledge.service.ts';

export default defineRoute({
  response: deleteResponse,
  body: keyBody,
  run: ({ actor, body, ports }) => deleteFile(requireUser(actor), body, ports),
});
