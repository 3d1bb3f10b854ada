import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteAccountBody } from '../user.schema.ts';
import { deleteAccount } from '../user.service.ts';

export default defineRoute({
  body: deleteAccountBody,
  run: ({ actor, ports }) => deleteAccount(requireFullAccess(actor), ports),
});
