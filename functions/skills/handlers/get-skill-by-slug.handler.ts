import { defineRoute } from '../../core/http/route.ts';
import { skillResponse, slugParams } from '../skill.schema.ts';
import { getSkillBySlug } from '../skill.service.ts';

export default defineRoute({
  response: skillResponse,
  params: slugParams,
  run: ({ actor, params, ports, urls }) => getSkillBySlug(actor, params.owner, params.slug, ports, urls),
});
