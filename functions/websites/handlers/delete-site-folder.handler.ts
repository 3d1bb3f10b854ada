import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteFolderResponse, folderBody } from '../websites.schema.ts';
import { deleteFolder } from '../websites.service.ts';

export default defineRoute({
  response: deleteFolderResponse,
  body: folderBody,
  run: ({ actor, body, ports }) => deleteFolder(requireUser(actor), body, ports),
});
