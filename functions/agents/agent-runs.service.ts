import * as z from 'zod';
import type { UserActor } from '../core/auth/actor.ts';
import { AuthenticationRequiredError, type PlatformError } from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import { lineageOf } from '../core/http/lineage.ts';
import { publicUrls } from '../core/http/public-urls.ts';
import { uuid } from '../core/ids.ts';
import { withSecretScope } from '../core/secret-scope.ts';
import { portsForArea, type Ports } from '../ports.ts';
import { agentsArea } from './agents.module.ts';
import { AGENT_RUN_TIMEOUT_SEC, type AgentRunRequest, type AgentRunResult, type AgentRuns } from './agent-runs.ts';
import { openChat, type ChatPorts } from './chat.service.ts';

/**
 * The `agentRuns` port in the process that holds the chat service: every area locally, the agents
 * function in the cloud (`serveAgentRun`). `platform` is read at the first run, once the ports exist.
 */
export function inProcessAgentRuns(ports: () => Ports): AgentRuns {
  return { run: (request, signal) => runAgent(request, portsForArea(ports(), agentsArea), signal) };
}

/**
 * What the agents function does with an `AgentRunEvent` (functions/cloud.ts dispatches it before
 * HTTP): the run, as `inProcessAgentRuns` makes it.
 */
export async function serveAgentRun(event: { readonly platformAgentRun: unknown }, ports: Ports): Promise<AgentRunResult> {
  const parsed = agentRunRequest.safeParse(event.platformAgentRun);
  if (!parsed.success) return { ok: false, code: 'INVALID_PARAMETERS', message: 'The agent run request is malformed.', status: 400 };
  return runAgent(parsed.data, portsForArea(ports, agentsArea));
}

const agentRunRequest = z.object({
  ownerId: z.string().min(1).max(128),
  agentId: z.string().min(1).max(128),
  prompt: z.string().max(1_000_000),
  conversationId: z.string().min(1).max(128).optional(),
  lineage: z.string().max(1024),
  baseUrl: z.url().optional(),
});

/**
 * Opens the chat as the owner, scoped to this one agent (as the run tokens cron and channels once
 * minted were), and runs it to its end through the chat service: the same checks, credits, usage
 * record, conversation and scrubbing as a chat over HTTP, but no credential, no request to the
 * platform's own API and no count against the owner's interactive chat limit. The run is a child
 * of the caller's request; it has a secret scope of its own, as a request would.
 */
function runAgent(request: AgentRunRequest, ports: ChatPorts & Pick<Ports, 'credentials' | 'log'>, signal?: AbortSignal): Promise<AgentRunResult> {
  const lineage = lineageOf(uuid(), request.lineage);
  const log = ports.log.child({ requestId: lineage.requestId, rootRequestId: lineage.rootRequestId, agentId: request.agentId });
  // Past this nobody waits for the answer (the cloud adapter stops waiting too): the run stops, billed for what it used.
  const deadline = AbortSignal.timeout(AGENT_RUN_TIMEOUT_SEC * 1000);
  const stop = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  return withSecretScope(async () => {
    try {
      const actor = await ownerActor(request, ports);
      const urls = publicUrls(ports.config, request.baseUrl ?? ports.config.STREAM_URL ?? '');
      const session = await openChat({ actor, lineage, log, urls, signal: stop }, request.agentId, request, ports);
      let reply = '';
      let failure: PlatformError | null = null;
      // As the buffered chat does: the run is read to its end, so its `end` (and the bill) is seen.
      for await (const event of session.run(stop)) {
        if (event.type === 'text') reply += event.data;
        else if (event.type === 'error') failure ??= event.error;
      }
      if (failure !== null) return failed(failure);
      return { ok: true, reply, conversationId: session.conversationId };
    } catch (error) {
      const result = failed(error);
      if (result.status >= 500) log.error('agent run failed', { error });
      return result;
    }
  });
}

/**
 * The owner as the run's caller: role scope (runs and reads; all the owner's keys, as for the
 * owner's own run tokens), limited to the one agent, so what the run prints is scrubbed of the
 * owner's keys before it reaches a channel. A closed account runs nothing.
 */
async function ownerActor(request: AgentRunRequest, ports: Pick<Ports, 'credentials'>): Promise<UserActor> {
  const account = await ports.credentials.getAccount(request.ownerId);
  if (account === null || account.status !== 'active') throw new AuthenticationRequiredError("The agent's owner has no active account.", 'OWNER_INACTIVE');
  return {
    kind: 'user',
    userId: account.userId,
    alias: account.alias,
    isAdmin: false,
    via: 'platform',
    tokenId: null,
    scope: 'role',
    roleKeys: null,
    agents: [request.agentId],
    account,
  };
}

function failed(error: unknown): Extract<AgentRunResult, { ok: false }> {
  const { status, code, message } = toErrorResponse(error);
  return { ok: false, code, message, status };
}
