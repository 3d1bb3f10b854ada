import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { updateProfileBody, userResponse } from '../user.schema.ts';
import { updateProfile } from '../user.service.ts';

export default defineRoute({
  response: userResponse,
  body: updateProfileBody,
  run: ({ actor, body, ports }) => updateProfile(requireFullAccess(actor), body, ports),
});
