import { defineRoute } from '../../core/http/route.ts';
import { createSkillBody, skillChangedResponse } from '../skill.schema.ts';
import { createSkill } from '../skill.service.ts';

/** `POST /skills/create`: 201 with the skill; 400 for bad frontmatter, 409 for a name the owner has, 413 above 256 KB. */
export default defineRoute({
  response: skillChangedResponse,
  body: createSkillBody,
  run: ({ actor, body, ports, urls }) => createSkill(actor, body, ports, urls),
});
