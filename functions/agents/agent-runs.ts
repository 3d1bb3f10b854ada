/**
 * The `agentRuns` port: how the platform runs an owner's agent on its own behalf (cron jobs,
 * channels), without a credential and outside the owner's interactive chat limit. The chat service
 * implements it (agent-runs.service.ts): locally in the same process, in the cloud behind the
 * agents function, which a caller invokes through the Lambda API (adapters/agent-runs/aws.ts).
 *
 * Types and the wire event only: callers' bundles (channels, cron) import this file, never the chat service.
 */

/** One run of `agentId`, as its owner, recorded as a child of the caller's request. */
export interface AgentRunRequest {
  readonly ownerId: string;
  readonly agentId: string;
  readonly prompt: string;
  /** Continues this conversation (the owner's, with this agent); a new one when absent. */
  readonly conversationId?: string;
  /** The caller's lineage as `childLineageHeader` writes it: the run's usage record joins the caller's. */
  readonly lineage: string;
  /** The base URL the caller's request came in on (the run's platform MCP address derives from it); the configured one otherwise. */
  readonly baseUrl?: string;
}

/** A run that answered, or why it did not: the code and message an HTTP caller would have got. */
export type AgentRunResult =
  | { readonly ok: true; readonly reply: string; readonly conversationId: string }
  | {
      readonly ok: false;
      readonly code: string;
      /** Scrubbed of the run's secrets, as every chat error is. */
      readonly message: string;
      /** The HTTP status the chat routes would answer with (404 for a conversation that is gone, 402, 500...). */
      readonly status: number;
    };

export interface AgentRuns {
  /**
   * Runs the agent to its end and answers its reply, billed to the owner and logged in the owner's
   * usage logs like any chat. Never throws for a refused or failed run (the result says why);
   * `signal` stops waiting (and, in-process, the run).
   */
  run(request: AgentRunRequest, signal?: AbortSignal): Promise<AgentRunResult>;
}

/**
 * Longest an agent run may take, end to end: the agent's own limit (MAX_AGENT_TIMEOUT_SEC, 880 s)
 * plus loading, saving and billing, within Lambda's 900 s. The agents function's timeout covers it
 * (lib/cloud/area-functions.ts), and the cloud adapter waits a little longer than that function may run.
 */
export const AGENT_RUN_TIMEOUT_SEC = 895;

/**
 * The event a caller invokes the agents function with (Lambda Invoke, RequestResponse). Only
 * principals granted `lambda:InvokeFunction` on that function can send it (API Gateway sends only
 * its proxy events), so it carries the owner's id without a credential.
 */
export interface AgentRunEvent {
  readonly platformAgentRun: AgentRunRequest;
}

export function isAgentRunEvent(event: unknown): event is AgentRunEvent {
  return typeof event === 'object' && event !== null && 'platformAgentRun' in event;
}
