import { defineRoute } from '../../core/http/route.ts';
import { listAccounts } from '../../users/user.service.ts';
import { listUsersQuery, userListResponse } from '../admin.schema.ts';

export default defineRoute({
  response: userListResponse,
  query: listUsersQuery,
  run: ({ query, ports }) => listAccounts(query, ports),
});
