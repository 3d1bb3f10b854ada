import { defineRoute } from '../../core/http/route.ts';
import { listSkillsQuery, skillListResponse } from '../skill.schema.ts';
import { listSkills } from '../skill.service.ts';

export default defineRoute({
  response: skillListResponse,
  query: listSkillsQuery,
  run: ({ actor, query, ports, urls }) => listSkills(actor, query, ports, urls),
});
