import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createFolderBody, folderResponse } from '../websites.schema.ts';
import { createFolder } from '../websites.service.ts';

export default defineRoute({
  response: folderResponse,
  body: createFolderBody,
  run: ({ actor, body, ports }) => createFolder(requireUser(actor), body, ports),
});
