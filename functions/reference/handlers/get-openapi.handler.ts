import { defineRoute, Reply } from '../../core/http/route.ts';
import { openApiDocument } from '../reference.service.ts';

/** The OpenAPI 3.1 document itself, not wrapped in an envelope: tools read it as it is. */
export default defineRoute({
  async run({ ports, urls }) {
    return Reply.raw(JSON.stringify(await openApiDocument(ports.config.PLATFORM_VERSION, urls)), 'application/json; charset=utf-8');
  },
});
