import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { connectStatusResponse } from '../billing.schema.ts';
import { connectStatus } from '../earnings.service.ts';

export default defineRoute({
  response: connectStatusResponse,
  run: ({ actor, ports }) => connectStatus(requireUser(actor), ports),
});
