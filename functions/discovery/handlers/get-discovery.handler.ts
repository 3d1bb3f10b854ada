import { defineRoute } from '../../core/http/route.ts';
import { discoveryResponse } from '../discovery.schema.ts';
import { discoveryDocument } from '../discovery.service.ts';

export default defineRoute({
  response: discoveryResponse,
  async run({ ports, urls }) {
    return discoveryDocument(ports.config, urls);
  },
});
