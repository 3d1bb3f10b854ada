import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { connectResponse } from '../billing.schema.ts';
import { connectOnboarding } from '../earnings.service.ts';

export default defineRoute({
  response: connectResponse,
  run: ({ actor, urls, ports }) => connectOnboarding(requireUser(actor), urls.baseUrl, ports),
});
