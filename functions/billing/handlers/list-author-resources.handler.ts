import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { authorResourcesResponse } from '../billing.schema.ts';
import { listAuthorResources } from '../earnings.service.ts';

export default defineRoute({
  response: authorResourcesResponse,
  run: ({ actor, ports }) => listAuthorResources(requireUser(actor), ports),
});
