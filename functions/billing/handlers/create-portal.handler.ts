import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createPortal } from '../subscription.service.ts';

export default defineRoute({
  run: ({ actor, urls, ports }) => createPortal(requireUser(actor), urls.baseUrl, ports),
});
