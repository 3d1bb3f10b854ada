import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { connectStatus } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => connectStatus(requireUser(actor), ports),
});
