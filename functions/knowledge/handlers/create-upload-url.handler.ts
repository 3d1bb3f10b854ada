import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadUrlBody, uploadUrlResponse } from '../knowledge.schema.ts';
import { createUploadUrl } from '../knowledge.service.ts';

export default defineRoute({
  response: uploadUrlResponse,
  body: uploadUrlBody,
  run: ({ actor, body, ports }) => createUploadUrl(requireUser(actor), body, ports),
});
