import { defineRoute } from '../../core/http/route.ts';
import { starBody } from '../star.schema.ts';
import { unstarResource } from '../star.service.ts';

export default defineRoute({
  body: starBody,
  run: ({ actor, body, ports }) => unstarResource(actor, body, ports),
});
