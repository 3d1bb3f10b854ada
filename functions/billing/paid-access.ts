/**
 * Who may call a paid MCP server's tools (SPEC part 2, paid servers), checked by the MCP endpoint
 * before the billed run opens (one call in functions/mcp/endpoint.service.ts):
 *
 * - free servers, the owner, and requests without `tools/call` (initialize, tools/list): nothing
 *   to check;
 * - an active subscriber, then a caller within the free trial (counted per caller and server by one
 *   conditional write, so concurrent calls never exceed it): admitted without the author's fee;
 * - past the trial, when the author set `perCallCredits`: admitted, paying that fee per call to
 *   the author through the billed run (`payee`);
 * - anyone else: 402 as a JSON-RPC error naming the subscribe URL.
 *
 * Infrastructure credits (TOOL_CALL_CREDITS) apply to every caller, as before.
 */
import type { Actor } from '../core/auth/actor.ts';
import { roundCredits } from '../core/credits.ts';
import { PlatformError } from '../core/errors.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { RunPayee } from '../core/runs/billed-run.ts';
import type { McpServerRecord } from '../mcp/mcp.schema.ts';
import type { PaidAccessStore, SubscriptionRecord } from './billing.store.ts';

/** 402 on the MCP endpoint: the caller must subscribe (or stay within the trial). */
export class SubscriptionRequiredError extends PlatformError {
  readonly kind = 'insufficient-credits';
  constructor(subscribeUrl: string, reason: string) {
    super(
      `This MCP server is paid: ${reason}. Subscribe with POST ${subscribeUrl} (a bearer token of your account), then call again.`,
      'SUBSCRIPTION_REQUIRED',
    );
  }
}

export interface PaidAccessPorts {
  /** Subscriptions and trials (the `paidAccess` port the MCP areas declare); absent only where no server is priced. */
  readonly paidAccess?: PaidAccessStore;
  readonly clock: { now(): number };
}

/** Whether a subscription record admits calls now: paid, and its period not over. */
export function subscriptionIsActive(record: SubscriptionRecord | null, nowMs: number): boolean {
  if (record === null) return false;
  if (record.status !== 'active' && record.status !== 'trialing') return false;
  return record.currentPeriodEnd === null || record.currentPeriodEnd * 1000 > nowMs;
}

/** The tools/call messages of a request body (what a trial counts). */
function toolCallsOf(body: string | undefined): number {
  if (body === undefined || body.trim() === '') return 0;
  try {
    const parsed: unknown = JSON.parse(body);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.filter((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call').length;
  } catch {
    return 0;
  }
}

/**
 * The paid-server rule for one request: resolves to what the billed run adds (`{}` or the author's
 * `payee`), or throws 402. `body` is the JSON-RPC body as received.
 */
export async function paidMcpAccess(
  server: McpServerRecord,
  actor: Actor,
  body: string | undefined,
  scope: Pick<RequestScope, 'urls'>,
  ports: PaidAccessPorts,
): Promise<{ payee?: RunPayee }> {
  const pricing = server.authorPricing;
  if (pricing === null || (actor.kind === 'user' && actor.userId === server.ownerId)) return {};
  const calls = toolCallsOf(body);
  if (calls === 0) return {};
  const subscribeUrl = `${scope.urls.baseUrl}/resources/${server.serverId}/subscribe`;
  if (actor.kind !== 'user') throw new SubscriptionRequiredError(subscribeUrl, 'anonymous callers cannot use its free trial');
  // Fail closed: a priced server is never called without its rule.
  if (ports.paidAccess === undefined) throw new Error('The paidAccess port is missing where a paid MCP server is called.');
  const subscription = await ports.paidAccess.getSubscription(actor.userId, `mcp#${server.serverId}`);
  if (subscriptionIsActive(subscription, ports.clock.now())) return {};
  if (pricing.freeTrialQuota > 0 && (await ports.paidAccess.takeTrialCalls(server.serverId, actor.userId, calls, pricing.freeTrialQuota))) return {};
  if (pricing.perCallCredits !== undefined) {
    return {
      payee: {
        userId: server.ownerId,
        credits: roundCredits(pricing.perCallCredits * calls),
        reason: `author fee: mcp ${server.serverName} tools/call x${calls}`,
      },
    };
  }
  throw new SubscriptionRequiredError(
    subscribeUrl,
    pricing.freeTrialQuota > 0 ? `your ${pricing.freeTrialQuota} free trial calls are used` : 'it has no free trial',
  );
}
