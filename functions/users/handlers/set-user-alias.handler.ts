import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { aliasSetResponse, setAliasBody } from '../user.schema.ts';
import { setAlias } from '../user.service.ts';

export default defineRoute({
  response: aliasSetResponse,
  body: setAliasBody,
  run: ({ actor, body, ports }) => setAlias(requireFullAccess(actor), body.alias, ports),
});
