import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { payoutHistoryResponse } from '../billing.schema.ts';
import { payoutHistory } from '../earnings.service.ts';

export default defineRoute({
  response: payoutHistoryResponse,
  run: ({ actor, ports }) => payoutHistory(requireUser(actor), ports),
});
