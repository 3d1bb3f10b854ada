import { defineRoute } from '../../core/http/route.ts';
import { ACTION_QUERY, actionIdParams, executionResponse, runBody } from '../action.schema.ts';
import { eventFromBody, eventFromQuery } from '../execution.rules.ts';
import { runAction } from '../execution.service.ts';

/**
 * `GET` and `POST /action/python-128mb/{actionId}`: the direct runtime call, bypassing the router's
 * 120-second limit. Same parameters and result; the action's own timeout (up to 300 s) applies.
 */
export default defineRoute({
  response: executionResponse,
  params: actionIdParams,
  body: runBody,
  openQuery: ACTION_QUERY,
  run: (ctx) => {
    const event = ctx.request.method === 'GET' ? eventFromQuery(ctx.request.query) : eventFromBody(ctx.body);
    return runAction(ctx, ctx.params.actionId, event, 'direct', ctx.ports);
  },
});
