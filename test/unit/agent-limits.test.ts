import { describe, expect, it } from 'vitest';
import { createAgentBody, MAX_AGENT_TIMEOUT_SEC } from '../../functions/agents/agent.schema.ts';
import { routes } from '../../lib/manifest/routes.ts';

describe('agent run limits against the chat routes', () => {
  it('ends the longest agent run inside the streaming chat route, with time left to record it', () => {
    // Prepare
    const streaming = routes.filter((r) => r.area === 'agents' && r.mode === 'streaming');
    // Assess
    expect(streaming.length).toBeGreaterThan(0);
    for (const route of streaming) expect(route.timeoutSec - MAX_AGENT_TIMEOUT_SEC, route.id).toBeGreaterThanOrEqual(10);
    for (const route of streaming) expect(route.timeoutSec, route.id).toBeLessThan(900);
  });

  it('refuses an agent timeout beyond the limit, naming the field', () => {
    const result = createAgentBody.safeParse({ agentName: 'a', description: 'd', sourceCode: 'x', timeoutSec: MAX_AGENT_TIMEOUT_SEC + 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['timeoutSec']);
  });
});
