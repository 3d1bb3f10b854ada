import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { skillChangedResponse, updateSkillBody } from '../skill.schema.ts';
import { updateSkill } from '../skill.service.ts';

export default defineRoute({
  response: skillChangedResponse,
  body: updateSkillBody,
  run: ({ actor, body, ports, urls }) => updateSkill(requireUser(actor), body, ports, urls),
});
