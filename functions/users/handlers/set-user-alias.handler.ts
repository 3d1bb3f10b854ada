import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { setAliasBody } from '../user.schema.ts';
import { setAlias } from '../user.service.ts';

export default defineRoute({
  body: setAliasBody,
  run: ({ actor, body, ports }) => setAlias(requireFullAccess(actor), body.alias, ports),
});
