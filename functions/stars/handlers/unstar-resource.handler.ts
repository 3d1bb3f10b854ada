import { defineRoute } from '../../core/http/route.ts';
import { starBody, unstarredResponse } from '../star.schema.ts';
import { unstarResource } from '../star.service.ts';

export default defineRoute({
  response: unstarredResponse,
  body: starBody,
  run: ({ actor, body, ports }) => unstarResource(actor, body, ports),
});
