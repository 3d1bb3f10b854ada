import { defineRoute } from '../../core/http/route.ts';
import { skillIdParams } from '../skill.schema.ts';
import { getSkill } from '../skill.service.ts';

export default defineRoute({
  params: skillIdParams,
  run: ({ actor, params, ports, urls }) => getSkill(actor, params.skillId, ports, urls),
});
