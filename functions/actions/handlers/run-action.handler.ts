import { defineRoute } from '../../core/http/route.ts';
import { ACTION_QUERY, actionIdParams, executionResponse, runBody } from '../action.schema.ts';
import { eventFromBody, eventFromQuery } from '../execution.rules.ts';
import { runAction } from '../execution.service.ts';

/**
 * `GET` and `POST /action/{actionId}`, through the router: parameters from the query string (GET)
 * or the JSON body (POST); the route's 120-second timeout answers 504 and aborts the run.
 */
export default defineRoute({
  response: executionResponse,
  params: actionIdParams,
  body: runBody,
  openQuery: ACTION_QUERY,
  run: (ctx) => {
    const event = ctx.request.method === 'GET' ? eventFromQuery(ctx.request.query) : eventFromBody(ctx.body);
    return runAction(ctx, ctx.params.actionId, event, 'router', ctx.ports);
  },
});
