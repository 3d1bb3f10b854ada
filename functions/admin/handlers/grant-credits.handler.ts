import { defineRoute } from '../../core/http/route.ts';
import { grantCredits } from '../../users/user.service.ts';
import { creditsGrantedResponse, grantCreditsBody, userIdParams } from '../admin.schema.ts';

export default defineRoute({
  response: creditsGrantedResponse,
  params: userIdParams,
  body: grantCreditsBody,
  run: ({ params, body, ports, lineage }) => grantCredits(params.userId, body, ports, lineage.requestId),
});
