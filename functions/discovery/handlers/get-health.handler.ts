import { defineRoute } from '../../core/http/route.ts';

export default defineRoute({
  async run({ platform }) {
    return { status: 'ok', version: platform.config.PLATFORM_VERSION };
  },
});
