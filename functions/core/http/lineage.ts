/**
 * Request lineage. When the platform calls itself (agent -> MCP server, cron -> agent, ...) it sets
 * the `X-Svc-Lineage` header so the callee's logs can be joined to the caller's.
 */
export interface Lineage {
  readonly requestId: string;
  /** First request of the chain; the request itself for direct calls. */
  readonly rootRequestId: string;
  readonly parentRequestId: string | null;
  readonly parentConversationId: string | null;
  readonly parentAgentId: string | null;
}

export const LINEAGE_HEADER = 'x-svc-lineage';

const ID = /^[A-Za-z0-9._:-]{1,128}$/;
const FIELDS = { root: 'rootRequestId', parent: 'parentRequestId', conversation: 'parentConversationId', agent: 'parentAgentId' } as const;

/** Lineage of a request from its own id and the (optional) incoming header; malformed parts are ignored. */
export function lineageOf(requestId: string, header: string | undefined): Lineage {
  const parsed: Partial<Record<(typeof FIELDS)[keyof typeof FIELDS], string>> = {};
  for (const part of (header ?? '').split(';')) {
    const [key, value] = part.split('=', 2).map((s) => s.trim());
    const field = FIELDS[key as keyof typeof FIELDS];
    if (field && value && ID.test(value)) parsed[field] = value;
  }
  return {
    requestId,
    rootRequestId: parsed.rootRequestId ?? parsed.parentRequestId ?? requestId,
    parentRequestId: parsed.parentRequestId ?? null,
    parentConversationId: parsed.parentConversationId ?? null,
    parentAgentId: parsed.parentAgentId ?? null,
  };
}

/** Header value for a call the platform makes on behalf of `lineage`'s request. */
export function childLineageHeader(lineage: Lineage, context: { conversationId?: string; agentId?: string } = {}): string {
  const parts = [`root=${lineage.rootRequestId}`, `parent=${lineage.requestId}`];
  if (context.conversationId) parts.push(`conversation=${context.conversationId}`);
  if (context.agentId) parts.push(`agent=${context.agentId}`);
  return parts.join(';');
}
