import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createFolderBody, folderResponse } from '../knowledge.schema.ts';
import { createFolder } from '../knowledge.service.ts';

export default defineRoute({
  response: folderResponse,
  body: createFolderBody,
  run: ({ actor, body, ports }) => createFolder(requireUser(actor), body, ports),
});
