import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { uploadBody } from '../websites.schema.ts';
import { uploadFile } from '../websites.service.ts';

export default defineRoute({
  body: uploadBody,
  run: ({ actor, body, ports, urls }) => uploadFile(requireUser(actor), body, ports, urls),
});
