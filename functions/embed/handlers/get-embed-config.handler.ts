import { defineRoute } from '../../core/http/route.ts';
import { embedConfigPublicResponse, embedConfigQuery } from '../embed.schema.ts';
import { embedConfig } from '../embed.service.ts';

export default defineRoute({
  response: embedConfigPublicResponse,
  query: embedConfigQuery,
  run: ({ query, request, ports }) => embedConfig(query.token, request.headers['origin'], ports),
});
