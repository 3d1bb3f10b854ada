import { defineRoute } from '../../core/http/route.ts';
import { listSkillsQuery } from '../skill.schema.ts';
import { listSkills } from '../skill.service.ts';

export default defineRoute({
  query: listSkillsQuery,
  run: ({ actor, query, ports, urls }) => listSkills(actor, query, ports, urls),
});
