import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadUrlBody, uploadUrlResponse } from '../websites.schema.ts';
import { createUploadUrl } from '../websites.service.ts';

export default defineRoute({
  response: uploadUrlResponse,
  body: uploadUrlBody,
  run: ({ actor, body, ports, urls }) => createUploadUrl(requireUser(actor), body, ports, urls),
});
