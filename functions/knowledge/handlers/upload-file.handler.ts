import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadBody } from '../knowledge.schema.ts';
import { uploadFile } from '../knowledge.service.ts';

export default defineRoute({
  body: uploadBody,
  run: ({ actor, body, ports }) => uploadFile(requireUser(actor), body, ports),
});
