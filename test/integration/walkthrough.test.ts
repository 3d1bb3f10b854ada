/**
 * The guide's (docs/guide.md) curl walkthrough is docs/walkthrough.sh (the guide's blocks are copied from it), and
 * here it runs as a reader would run it: against a platform on a fresh DATA_DIR, from a directory
 * that is not the checkout, with only BASE and ADMIN set. OAuth is configured against a loopback
 * provider that consents at once, so that section runs too.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';

const script = fileURLToPath(new URL('../../docs/walkthrough.sh', import.meta.url));

/** Runs the script without blocking this process's event loop, which serves the platform it calls. */
function runScript(cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the guide walkthrough (docs/walkthrough.sh)', () => {
  const provider = new FakeProvider();
  let platform: TestPlatform;
  let elsewhere: string;

  beforeAll(async () => {
    provider.autoConsent = true;
    await provider.start();
    platform = await startTestPlatform({
      env: {
        OAUTH_PROVIDER_A_AUTHORIZE_URL: `${provider.url}/authorize`,
        OAUTH_PROVIDER_A_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET: CLIENT_SECRET,
      },
    });
    elsewhere = await mkdtemp(join(tmpdir(), 'walkthrough-cwd-'));
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await provider.stop();
    if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
  });

  // About 25 s on a quiet machine; several minutes when the machine is shared (decision 0027).
  it('runs every step on a fresh platform, from a directory that is not the checkout', { timeout: 360_000 }, async () => {
    // Act
    const { code, output } = await runScript(elsewhere, { BASE: platform.url, ADMIN: platform.adminToken, OAUTH_AUTO_CONSENT: '1' });
    // Assess: a failure shows what the script printed, the failing step last
    expect(code, output).toBe(0);
    expect(output, 'the action reads the key stored before it').toContain('"hasKey": true');
    expect(output, 'the OAuth callback stored the tokens').toContain('"provider_a_refresh"');
  });
});
