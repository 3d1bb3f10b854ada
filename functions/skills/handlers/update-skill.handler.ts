import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { updateSkillBody } from '../skill.schema.ts';
import { updateSkill } from '../skill.service.ts';

export default defineRoute({
  body: updateSkillBody,
  run: ({ actor, body, ports, urls }) => updateSkill(requireUser(actor), body, ports, urls),
});
