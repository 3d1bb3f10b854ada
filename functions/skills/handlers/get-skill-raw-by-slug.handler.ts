import { defineRoute } from '../../core/http/route.ts';
import { slugParams } from '../skill.schema.ts';
import { rawSkillBySlug } from '../skill.service.ts';

/** As `get-skill-raw`, by `{owner}/{slug}`. */
export default defineRoute({
  rawContentType: 'text/markdown; charset=utf-8',
  params: slugParams,
  run: ({ actor, params, ports, request }) => rawSkillBySlug(actor, params.owner, params.slug, request.headers['if-none-match'], ports),
});
