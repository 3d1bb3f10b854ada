import { defineRoute } from '../../core/http/route.ts';
import { healthResponse } from '../discovery.schema.ts';

export default defineRoute({
  response: healthResponse,
  async run({ ports }) {
    return { status: 'ok' as const, version: ports.config.PLATFORM_VERSION };
  },
});
