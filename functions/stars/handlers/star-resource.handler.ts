import { defineRoute } from '../../core/http/route.ts';
import { starBody } from '../star.schema.ts';
import { starResource } from '../star.service.ts';

export default defineRoute({
  body: starBody,
  run: ({ actor, body, ports }) => starResource(actor, body, ports),
});
