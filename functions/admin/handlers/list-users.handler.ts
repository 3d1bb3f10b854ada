import { defineRoute } from '../../core/http/route.ts';
import { listAccounts } from '../../users/user.service.ts';
import { listUsersQuery } from '../admin.schema.ts';

export default defineRoute({
  query: listUsersQuery,
  run: ({ query, ports }) => listAccounts(query, ports),
});
