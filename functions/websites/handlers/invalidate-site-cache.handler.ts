import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { invalidateBody, invalidateResponse } from '../websites.schema.ts';
import { invalidateCache } from '../websites.service.ts';

export default defineRoute({
  response: invalidateResponse,
  body: invalidateBody,
  run: ({ actor, body, ports, lineage }) => invalidateCache(requireUser(actor), body, ports, lineage),
});
