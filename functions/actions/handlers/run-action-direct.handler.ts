import { defineRoute } from '../../core/http/route.ts';
import { actionIdParams, runBody } from '../action.schema.ts';
import { eventFromBody, eventFromQuery } from '../execution.rules.ts';
import { runAction } from '../execution.service.ts';

/**
 * `GET` and `POST /action/python-128mb/{actionId}`: the direct runtime call, bypassing the router's
 * 120-second limit. Same parameters and result; the action's own timeout (up to 300 s) applies.
 */
export default defineRoute({
  params: actionIdParams,
  body: runBody,
  run: ({ actor, params, body, request, ports, lineage, log, signal }) => {
    const event = request.method === 'GET' ? eventFromQuery(request.query) : eventFromBody(body);
    return runAction(actor, params.actionId, event, 'direct', { ...ports, log }, lineage, signal);
  },
});
