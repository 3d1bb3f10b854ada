import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadBody, uploadResponse } from '../websites.schema.ts';
import { uploadFile } from '../websites.service.ts';

export default defineRoute({
  response: uploadResponse,
  body: uploadBody,
  run: ({ actor, body, ports, urls }) => uploadFile(requireUser(actor), body, ports, urls),
});
