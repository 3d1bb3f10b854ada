import { defineRoute, Reply } from '../../core/http/route.ts';
import { createAccount } from '../../users/user.service.ts';
import { createUserBody, userCreatedResponse } from '../admin.schema.ts';

export default defineRoute({
  response: userCreatedResponse,
  body: createUserBody,
  run: async ({ body, ports, lineage }) => Reply.created(await createAccount(body, ports, lineage.requestId)),
});
