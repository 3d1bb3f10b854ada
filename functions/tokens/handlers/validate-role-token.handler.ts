import { defineRoute } from '../../core/http/route.ts';
import { roleTokenValidationResponse, validateRoleTokenBody } from '../role-token.schema.ts';
import { validateRoleToken } from '../role-token.service.ts';

export default defineRoute({
  response: roleTokenValidationResponse,
  body: validateRoleTokenBody,
  run: ({ body, ports }) => validateRoleToken(body.token, ports),
});
