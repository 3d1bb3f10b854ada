/**
 * The public resource catalogue over the real search engine and DynamoDB stand-in: a resource is in
 * search while public and as it is now, an MCP server's tools are results of their own, and a
 * resource with many matching chunks is one result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCE_PARTITION, syncResource, toResourceResults, type PublicResource } from '../../functions/search/resource-index.ts';
import { createSearchEngine } from '../../functions/search/search-engine.ts';
import type { SearchIndex } from '../../functions/search/search-index.ts';
import { createSearchStore } from '../../functions/search/search.store.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';

const weather: PublicResource = {
  resourceType: 'mcp',
  resourceId: 'mcp-1',
  name: 'weather',
  description: 'Forecasts for any city',
  slug: 'bob/weather',
  owner: 'bob',
  ownerId: 'user-bob',
  tools: [{ name: 'get_forecast', description: 'Tomorrow in one city' }, { name: 'alerts' }],
};

describe('resource index', () => {
  let local: LocalDb;
  let index: SearchIndex;
  const search = async (text: string) => toResourceResults(await index.query(RESOURCE_PARTITION, { text, limit: 20 }));

  beforeAll(async () => {
    local = await startLocalDb();
    index = createSearchEngine({ store: createSearchStore(local.db), embedder: null });
  });
  afterAll(async () => {
    await local.stop();
  });

  it("finds a public MCP server by its description and each of its tools by the tool's name", async () => {
    await syncResource(index, 'mcp', weather.resourceId, weather);
    expect((await search('forecasts')).map((r) => [r.resourceType, r.name])).toEqual(
      expect.arrayContaining([
        ['mcp', 'weather'],
        ['mcp-tool', 'get_forecast'],
      ]),
    );
    expect(await search('alerts')).toEqual([expect.objectContaining({ resourceType: 'mcp-tool', name: 'alerts', slug: 'bob/weather', resourceId: 'mcp-1' })]);
  });

  it('follows renames and tool changes, and forgets a resource made private', async () => {
    await syncResource(index, 'mcp', weather.resourceId, { ...weather, name: 'climate', tools: [{ name: 'history' }] });
    expect((await search('alerts')).length).toBe(0);
    expect((await search('climate')).map((r) => r.name)).toEqual(['climate']);
    await syncResource(index, 'mcp', weather.resourceId, null);
    expect(await search('climate')).toEqual([]);
    expect(await search('history')).toEqual([]);
  });

  it('answers a skill whose long body matches in several chunks once', async () => {
    const body = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about glaciers and their retreat.`).join('\n\n');
    await syncResource(index, 'skill', 'sk-1', {
      resourceType: 'skill',
      resourceId: 'sk-1',
      name: 'ice-notes',
      description: 'Notes',
      slug: 'ann/ice-notes',
      owner: 'ann',
      ownerId: 'user-ann',
      body,
    });
    const results = await search('glaciers');
    expect(results.map((r) => r.resourceId)).toEqual(['sk-1']);
  });

  it('indexes a tool listed twice once', async () => {
    // Act
    await syncResource(index, 'mcp', 'mcp-2', { ...weather, resourceId: 'mcp-2', name: 'marine', tools: [{ name: 'swell' }, { name: 'swell' }] });
    // Assess
    expect((await search('swell')).map((r) => [r.resourceType, r.name])).toEqual([['mcp-tool', 'swell']]);
  });
});
