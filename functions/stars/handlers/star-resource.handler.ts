import { defineRoute } from '../../core/http/route.ts';
import { starBody, starredResponse } from '../star.schema.ts';
import { starResource } from '../star.service.ts';

export default defineRoute({
  response: starredResponse,
  body: starBody,
  run: ({ actor, body, ports }) => starResource(actor, body, ports),
});
