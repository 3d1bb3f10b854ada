import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { runJob } from '../cron-run.service.ts';
import { cronIdParams, cronRunResponse } from '../cron.schema.ts';
import { ownedCron } from '../cron.service.ts';

/** Runs the job now, as a scheduled run would, under this request's id (its lineage is the run's). */
export default defineRoute({
  response: cronRunResponse,
  params: cronIdParams,
  run: async ({ actor, params, ports, lineage, log, urls, signal }) =>
    runJob(await ownedCron(requireUser(actor), params.cronId, ports), lineage, { trigger: 'now', baseUrl: urls.baseUrl, signal }, { ...ports, log }),
});
