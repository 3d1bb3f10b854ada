import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { accountDeletedResponse, deleteAccountBody } from '../user.schema.ts';
import { deleteAccount } from '../user.service.ts';

export default defineRoute({
  response: accountDeletedResponse,
  body: deleteAccountBody,
  run: ({ actor, ports }) => deleteAccount(requireFullAccess(actor), ports),
});
