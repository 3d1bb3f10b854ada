/**
 * Adding an area is its folder and one line in the module list: a sample area (test/fixtures)
 * joins the real ones on the local platform, serves its route and runs its schedule through the
 * in-process scheduler, with its declared port and nothing else.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areas } from '../../lib/manifest/index.ts';
import { sampleArea, undeclaredSampleArea } from '../fixtures/sample-area/sample.module.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('a sample area added to the module list', () => {
  let platform: TestPlatform;
  const logLines: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ areas: [...areas, sampleArea], logLines });
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('serves its route and runs its schedule with the port it declares', async () => {
    // Prepare: one public agent for the sample to count
    const user = await createUser(platform, { alias: 'sample-owner' });
    const created = await platform.api('POST', '/agent/create', {
      token: user.token,
      body: {
        agentName: 'counted',
        description: 'public',
        sourceCode: readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8'),
        visibility: 'public',
      },
    });

    // Act
    const counted = await platform.api('GET', '/sample/public-agents', { token: user.token });
    const outcome = await platform.running.scheduler.trigger('sample.log-public-agents');

    // Assess
    expect(created.status).toBe(200);
    expect(counted.status).toBe(200);
    expect(counted.body.data).toEqual({ publicAgents: 1 });
    expect(outcome).toBe('succeeded');
    const line = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['message'] === 'sample: public agents counted');
    expect(line).toMatchObject({ publicAgents: 1, entryPoint: 'sample.log-public-agents' });
  });

  it('fails a scheduled run that uses a port its module does not declare, and logs why', async () => {
    // Prepare
    const lines: string[] = [];
    const other = await startTestPlatform({ areas: [...areas, undeclaredSampleArea], logLines: lines });

    // Act
    const outcome = await other.running.scheduler.trigger('sample.log-public-agents').finally(() => other.stop({ removeData: true }));

    // Assess
    expect(outcome).toBe('failed');
    expect(lines.join('\n')).toContain('The sample area used the agents port without declaring it');
  });
});
