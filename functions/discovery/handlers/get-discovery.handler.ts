import { defineRoute } from '../../core/http/route.ts';
import { discoveryDocument } from '../discovery.service.ts';

export default defineRoute({
  async run({ ports, request }) {
    return discoveryDocument(ports.config, request.baseUrl);
  },
});
