import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { skillDeletedResponse, skillRefBody } from '../skill.schema.ts';
import { deleteSkill } from '../skill.service.ts';

export default defineRoute({
  response: skillDeletedResponse,
  body: skillRefBody,
  run: ({ actor, body, ports }) => deleteSkill(requireUser(actor), body, ports),
});
