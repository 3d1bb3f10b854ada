import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listLogsQuery, logListResponse } from '../log.schema.ts';
import { listLogs } from '../log.service.ts';

export default defineRoute({
  response: logListResponse,
  query: listLogsQuery,
  run: ({ actor, query, ports }) => listLogs(requireUser(actor), query, ports),
});
