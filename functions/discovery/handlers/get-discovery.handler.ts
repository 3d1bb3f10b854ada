import { defineRoute } from '../../core/http/route.ts';
import { discoveryDocument } from '../discovery.service.ts';

export default defineRoute({
  async run({ platform, request }) {
    return discoveryDocument(platform.config, request.baseUrl);
  },
});
