import { defineRoute, Reply } from '../../core/http/route.ts';
import { docsPage } from '../reference.service.ts';

export default defineRoute({
  async run() {
    return Reply.raw(await docsPage(), 'text/html; charset=utf-8');
  },
});
