import { describe, expect, it } from 'vitest';
import { createServerBody, mcpQuery, rollbackBody, serverIdSchema, updateServerBody, versionParams } from '../../functions/mcp/mcp.schema.ts';
import { endpointUrls, newServerId } from '../../functions/mcp/mcp.service.ts';

const base = { serverName: 'weather-tools', description: 'forecasts', sourceCode: 'exports.createMcpServer = () => null;' };

describe('MCP server schemas', () => {
  it('fills the create defaults: private, visible source, no pricing', () => {
    // Act
    const parsed = createServerBody.parse(base);
    // Assess
    expect(parsed).toMatchObject({ visibility: 'private', sourceVisibility: 'visible' });
    expect(parsed.authorPricing).toBeUndefined();
  });

  it.each(['Weather', 'weather_tools', '-weather', 'weather-', 'weather--tools', '', 'a'.repeat(65)])('refuses the server name %j', (serverName) => {
    expect(createServerBody.safeParse({ ...base, serverName }).success).toBe(false);
  });

  it('validates author pricing: at least 0.50 USD in whole cents, a whole free-trial quota', () => {
    // Act
    const ok = updateServerBody.parse({ serverId: 'mcp-a1', authorPricing: { subscriptionPriceUsdMonthly: 0.5 } });
    const full = updateServerBody.parse({ serverId: 'mcp-a1', authorPricing: { subscriptionPriceUsdMonthly: 9.99, freeTrialQuota: 100 } });
    const removed = updateServerBody.parse({ serverId: 'mcp-a1', authorPricing: null });
    // Assess
    expect(ok.authorPricing).toEqual({ subscriptionPriceUsdMonthly: 0.5, freeTrialQuota: 0 });
    expect(full.authorPricing).toEqual({ subscriptionPriceUsdMonthly: 9.99, freeTrialQuota: 100 });
    expect(removed.authorPricing).toBeNull();
    for (const pricing of [
      { subscriptionPriceUsdMonthly: 0.49 },
      { subscriptionPriceUsdMonthly: 1.234 },
      { subscriptionPriceUsdMonthly: '5' },
      {},
      { subscriptionPriceUsdMonthly: 1, freeTrialQuota: 1.5 },
      { subscriptionPriceUsdMonthly: 1, freeTrialQuota: -1 },
    ]) {
      expect(updateServerBody.safeParse({ serverId: 'mcp-a1', authorPricing: pricing }).success, JSON.stringify(pricing)).toBe(false);
    }
  });

  it('reads a pinned version from v or version, and refuses two different ones or a non-number', () => {
    // Assess
    expect(mcpQuery.parse({})).toEqual({ version: undefined });
    expect(mcpQuery.parse({ v: '3' })).toEqual({ version: 3 });
    expect(mcpQuery.parse({ version: '4', userId: 'ignored' })).toEqual({ version: 4 });
    expect(mcpQuery.parse({ v: '5', version: '5' })).toEqual({ version: 5 });
    expect(mcpQuery.safeParse({ v: '5', version: '6' }).success).toBe(false);
    expect(mcpQuery.safeParse({ v: 'latest' }).success).toBe(false);
    expect(mcpQuery.safeParse({ v: '0' }).success).toBe(false);
    expect(mcpQuery.safeParse({ v: '1.5' }).success).toBe(false);
    expect(versionParams.safeParse({ serverId: 'mcp-a1', version: '2' }).success).toBe(true);
    expect(rollbackBody.safeParse({ targetVersion: '2' }).success).toBe(false);
  });

  it('makes server ids with the mcp- prefix that its own schema accepts, and endpoint URLs from them', () => {
    // Act
    const ids = Array.from({ length: 50 }, newServerId);
    // Assess
    for (const id of ids) expect(serverIdSchema.safeParse(id).success).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^mcp-[A-Za-z0-9]{20}$/);
    expect(endpointUrls('https://mcp.example', { serverId: 'mcp-x', serverName: 'calc' }, 'ann')).toEqual({
      endpointUrl: 'https://mcp.example/mcp/mcp-x',
      slugEndpointUrl: 'https://mcp.example/mcp/s/ann/calc',
    });
    expect(endpointUrls('https://mcp.example', { serverId: 'mcp-x', serverName: 'calc' }, null).slugEndpointUrl).toBeNull();
  });
});
