import { defineRoute } from '../../core/http/route.ts';
import { skillIdParams } from '../skill.schema.ts';
import { rawSkillById } from '../skill.service.ts';

/** The SKILL.md text as stored, with an ETag (304 on a match) and a five-minute cache header. */
export default defineRoute({
  rawContentType: 'text/markdown; charset=utf-8',
  params: skillIdParams,
  run: ({ actor, params, ports, request }) => rawSkillById(actor, params.skillId, request.headers['if-none-match'], ports),
});
