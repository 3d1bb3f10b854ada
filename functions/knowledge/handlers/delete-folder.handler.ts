import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteFolderResponse, keyBody } from '../knowledge.schema.ts';
import { deleteFolder } from '../knowledge.service.ts';

export default defineRoute({
  response: deleteFolderResponse,
  body: keyBody,
  run: ({ actor, body, ports }) => deleteFolder(requireUser(actor), body, ports),
});
