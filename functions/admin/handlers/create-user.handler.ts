import { defineRoute, Reply } from '../../core/http/route.ts';
import { createAccount } from '../../users/user.service.ts';
import { createUserBody } from '../admin.schema.ts';

export default defineRoute({
  body: createUserBody,
  run: async ({ body, ports, lineage }) => Reply.created(await createAccount(body, ports, lineage.requestId)),
});
