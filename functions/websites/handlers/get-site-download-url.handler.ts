import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { downloadUrlResponse, keyBody } from '../websites.schema.ts';
import { createDownloadUrl } from '../websites.service.ts';

export default defineRoute({
  response: downloadUrlResponse,
  body: keyBody,
  run: ({ actor, body, ports }) => createDownloadUrl(requireUser(actor), body, ports),
});
