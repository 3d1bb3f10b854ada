/**
 * The framework tier: tests that run agents written with the real Strands Agents SDK on a real
 * local platform. They need an interpreter that has Strands installed (built from source snapshots
 * by ../shared/frameworks/build-strands-env.sh, since the Python package index is not reachable
 * here), named by STRANDS_PYTHON; without it every file of the tier is skipped, and
 * `npm run test:frameworks` says so in one line.
 */
import { describe } from 'vitest';
import type { TestPlatform } from '../support/local-platform.ts';

/** The interpreter with the real Strands SDK, or null when the tier cannot run. */
export const STRANDS_PYTHON: string | null = process.env['STRANDS_PYTHON'] || null;

/** `describe`, skipped when no Strands interpreter is configured. */
export const describeWithStrands = describe.skipIf(STRANDS_PYTHON === null);

/** Creates an agent of `token`'s user from `sourceCode` and returns its id (throws with the platform's answer otherwise). */
export async function createAgent(platform: TestPlatform, token: string, agentName: string, sourceCode: string): Promise<string> {
  const res = await platform.api('POST', '/agent/create', { token, body: { agentName, description: `${agentName} (framework tier)`, sourceCode } });
  if (res.status !== 200) throw new Error(`creating ${agentName}: ${res.status} ${res.text}`);
  return res.body.data.agentId as string;
}

/** Stores a third-party key in the vault, as `POST /keys/store` does for a user. */
export async function storeKey(platform: TestPlatform, token: string, serviceName: string, apiKey: string): Promise<void> {
  const res = await platform.api('POST', '/keys/store', { token, body: { serviceName, apiKey } });
  if (res.status >= 300) throw new Error(`storing key ${serviceName}: ${res.status} ${res.text}`);
}

/** One buffered chat turn (`POST /agent/{id}/chat`); the answer as the platform gives it. */
export function chat(platform: TestPlatform, token: string, agentId: string, prompt: string, conversationId?: string) {
  return platform.api('POST', `/agent/${agentId}/chat`, { token, body: { prompt, ...(conversationId ? { conversationId } : {}) } });
}
