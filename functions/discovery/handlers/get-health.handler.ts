import { defineRoute } from '../../core/http/route.ts';

export default defineRoute({
  async run({ ports }) {
    return { status: 'ok', version: ports.config.PLATFORM_VERSION };
  },
});
