import { defineRoute } from '../../core/http/route.ts';
import { instanceTypesResponse } from '../code-server.schema.ts';
import { instanceTypes } from '../code-server.service.ts';

export default defineRoute({
  response: instanceTypesResponse,
  run: () => Promise.resolve(instanceTypes()),
});
