import { defineRoute } from '../../core/http/route.ts';
import { actionIdParams, runBody } from '../action.schema.ts';
import { eventFromBody, eventFromQuery } from '../execution.rules.ts';
import { runAction } from '../execution.service.ts';

/**
 * `GET` and `POST /action/{actionId}`, through the router: parameters from the query string (GET)
 * or the JSON body (POST); the route's 120-second timeout answers 504 and aborts the run.
 */
export default defineRoute({
  params: actionIdParams,
  body: runBody,
  run: ({ actor, params, body, request, ports, lineage, log, signal }) => {
    const event = request.method === 'GET' ? eventFromQuery(request.query) : eventFromBody(body);
    return runAction(actor, params.actionId, event, 'router', { ...ports, log }, lineage, signal);
  },
});
