/**
 * What a run of an agent is given to call the platform back: a short-lived credential of the
 * agent's owner (so the owner's private MCP servers answer and agent sources hold no secrets), the
 * hosts it may call with it, and the lineage its calls carry (so their usage records join the run's).
 */
import type { UserActor } from '../auth/actor.ts';
import type { RunTokens } from '../auth/run-token.ts';
import { childLineageHeader, LINEAGE_HEADER, type Lineage } from '../http/lineage.ts';
import type { PublicUrls } from '../http/public-urls.ts';
import { registerSecret } from '../secret-scope.ts';

/**
 * Mints the run's credential for `ownerId`, valid a minute past the run's longest time. A role-token
 * caller who owns what runs passes on only that token's keys. The token is a secret of the request:
 * scrubbed from its logs and records.
 */
export async function mintRunCredential(runTokens: Pick<RunTokens, 'mint'>, actor: UserActor, ownerId: string, maxRunMs: number): Promise<string> {
  const keys = actor.userId === ownerId && actor.scope === 'role' ? actor.roleKeys : null;
  const token = await runTokens.mint({ userId: ownerId, keys }, maxRunMs + 60_000);
  registerSecret(token);
  return token;
}

/**
 * The platform's own hosts an agent may call: its MCP host (and the base host, where MCP lives
 * locally), as the public URLs and the run's own (`runUrlsOf`) name them: the agent is given the
 * latter, and its code may hold the former.
 */
export function platformHostsOf(...urls: readonly PublicUrls[]): string[] {
  return [...new Set(urls.flatMap((each) => [each.mcpUrl, each.baseUrl]).map((url) => new URL(url).host))];
}

/** What the runtime adds to the run's requests to the platform's `hosts`: the credential and the lineage. */
export function platformCallsOf(hosts: string[], token: string, lineage: Lineage, parent: { conversationId?: string; agentId: string }) {
  return {
    hosts,
    headers: { authorization: `Bearer ${token}`, [LINEAGE_HEADER]: childLineageHeader(lineage, parent) },
  };
}
