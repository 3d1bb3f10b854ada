/**
 * No input ends the local platform's process (issue 30): what a caller sends that reaches a
 * callback with no caller above it (a socket's event, a refusal sent from an async step) is
 * answered or refused, and every tenant keeps being served. Cron jobs whose year range ends are in
 * cron.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLOSE } from '../../functions/voice/voice-session.service.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** Opens a WebSocket and resolves with how the server closed it. */
const closeOf = (url: string) =>
  new Promise<{ code: number; reason: string }>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    ws.on('error', reject);
  });

describe('hostile input to callbacks of the local platform', () => {
  let platform: TestPlatform;
  let token: string;
  let voiceUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    token = (await createUser(platform, { alias: 'hostile-callbacks', credits: 10 })).token;
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('refuses a voice socket for an agent id of multi-byte characters with a close reason WebSocket allows, and keeps serving', async () => {
    // Prepare: the refusal names the agent id, 100 characters of 2 bytes each
    const agentId = 'é'.repeat(100);

    // Act
    const closed = await closeOf(`${voiceUrl}/ws/${encodeURIComponent(agentId)}?token=${token}`);
    const health = await platform.api('GET', '/health');

    // Assess
    expect(closed.code).toBe(CLOSE.noSuchAgent);
    expect(closed.reason).toMatch(/^agent é+$/);
    expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);
    expect(health.status).toBe(200);
  });
});
