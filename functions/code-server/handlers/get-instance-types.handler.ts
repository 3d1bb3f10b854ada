import { defineRoute } from '../../core/http/route.ts';
import { instanceTypes } from '../code-server.service.ts';

export default defineRoute({
  run: () => Promise.resolve(instanceTypes()),
});
