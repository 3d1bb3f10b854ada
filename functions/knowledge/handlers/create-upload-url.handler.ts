import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadUrlBody } from '../knowledge.schema.ts';
import { createUploadUrl } from '../knowledge.service.ts';

export default defineRoute({
  body: uploadUrlBody,
  run: ({ actor, body, ports }) => createUploadUrl(requireUser(actor), body, ports),
});
