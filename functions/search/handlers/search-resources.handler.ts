import { defineRoute } from '../../core/http/route.ts';
import { searchResourcesQuery, searchResponse } from '../search.schema.ts';
import { searchResources } from '../search.service.ts';

export default defineRoute({
  response: searchResponse,
  query: searchResourcesQuery,
  run: ({ query, ports }) => searchResources(query, ports),
});
