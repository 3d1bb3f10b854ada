import { defineRoute } from '../../core/http/route.ts';
import { discoveryDocument } from '../discovery.service.ts';

export default defineRoute({
  async run({ ports, urls }) {
    return discoveryDocument(ports.config, urls);
  },
});
