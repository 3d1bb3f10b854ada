import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { portalResponse } from '../billing.schema.ts';
import { createPortal } from '../subscription.service.ts';

export default defineRoute({
  response: portalResponse,
  run: ({ actor, urls, ports }) => createPortal(requireUser(actor), urls.baseUrl, ports),
});
