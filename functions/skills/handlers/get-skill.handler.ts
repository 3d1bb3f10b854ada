import { defineRoute } from '../../core/http/route.ts';
import { skillIdParams, skillResponse } from '../skill.schema.ts';
import { getSkill } from '../skill.service.ts';

export default defineRoute({
  response: skillResponse,
  params: skillIdParams,
  run: ({ actor, params, ports, urls }) => getSkill(actor, params.skillId, ports, urls),
});
