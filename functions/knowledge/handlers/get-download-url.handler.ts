import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { downloadUrlResponse, keyBody } from '../knowledge.schema.ts';
import { createDownloadUrl } from '../knowledge.service.ts';

export default defineRoute({
  response: downloadUrlResponse,
  body: keyBody,
  run: ({ actor, body, ports }) => createDownloadUrl(requireUser(actor), body, ports),
});
