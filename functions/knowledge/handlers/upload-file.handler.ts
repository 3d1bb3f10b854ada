import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadBody, uploadResponse } from '../knowledge.schema.ts';
import { uploadFile } from '../knowledge.service.ts';

export default defineRoute({
  response: uploadResponse,
  body: uploadBody,
  run: ({ actor, body, ports }) => uploadFile(requireUser(actor), body, ports),
});
