import { defineRoute } from '../../core/http/route.ts';
import { searchResourcesQuery } from '../search.schema.ts';
import { searchResources } from '../search.service.ts';

export default defineRoute({
  query: searchResourcesQuery,
  run: ({ query, ports }) => searchResources(query, ports),
});
