import { defineRoute } from '../../core/http/route.ts';
import { embedConfigPublicResponse, embedConfigQuery } from '../embed.schema.ts';
import { embedConfig } from '../embed.service.ts';
import { pageOrigin } from '../origin.ts';

export default defineRoute({
  response: embedConfigPublicResponse,
  query: embedConfigQuery,
  run: ({ query, request, ports, urls }) => embedConfig(query.token, pageOrigin(request.headers, urls.baseUrl), ports),
});
