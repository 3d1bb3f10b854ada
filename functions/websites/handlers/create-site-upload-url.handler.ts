import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadUrlBody } from '../websites.schema.ts';
import { createUploadUrl } from '../websites.service.ts';

export default defineRoute({
  body: uploadUrlBody,
  run: ({ actor, body, ports, urls }) => createUploadUrl(requireUser(actor), body, ports, urls),
});
