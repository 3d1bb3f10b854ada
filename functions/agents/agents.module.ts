import * as z from 'zod';
import { defineArea, providePort, KIB } from '../../lib/manifest/define.ts';
import { createAgentStore } from './agent.store.ts';
import { createConversationStore } from './conversation.store.ts';

/**
 * The SPEC's 900-second streaming chat, less a margin: Lambda stops a function at 900 s, so the
 * platform's own timeout (which ends the stream with an error marker and records the run) must
 * come first.
 */
const STREAMING_CHAT_TIMEOUT_SEC = 895;

/** Authenticated agent-reference requests (chat): 60 a minute per caller, shared by the three chat routes. */
const CHAT_RATE_LIMIT = { limit: 60, windowSec: 60, bucket: 'agent-chat' } as const;

/** Source checks (each runs the runtime's checker): an editor checks as its user types, a pause at a time. */
const CHECK_RATE_LIMIT = { limit: 120, windowSec: 60, bucket: 'agent-check' } as const;

/** Agents, their conversations and chat (SPEC 4.1). */
export const agentsArea = defineArea({
  name: 'agents',
  routes: [
    // Agents (SPEC 4.1): envelope A. Chat is limited to 60 requests a minute per caller (SPEC part 8).
    { method: 'POST', path: '/agent/create', handler: 'create-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB },
    // The checker of create and update without saving, for editors (a platform extra to SPEC 4.1).
    {
      method: 'POST',
      path: '/agent/check',
      handler: 'check-agent',
      auth: 'required',
      style: 'A',
      maxBodyBytes: 512 * KIB,
      rateLimit: CHECK_RATE_LIMIT,
    },
    { method: 'GET', path: '/agent/list', handler: 'list-agents', auth: 'optional', callers: 'role', style: 'A' },
    { method: 'GET', path: '/agent/conversations/recent', handler: 'list-recent-conversations', auth: 'required', callers: 'role', style: 'A' },
    { method: 'GET', path: '/agent/{agentId}', handler: 'get-agent', auth: 'optional', callers: 'role', style: 'A' },
    { method: 'GET', path: '/agent/s/{owner}/{slug}', handler: 'get-agent-by-slug', auth: 'optional', callers: 'role', style: 'A' },
    { method: 'PUT', path: '/agent/update', handler: 'update-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB },
    { method: 'POST', path: '/agent/update', handler: 'update-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB },
    { method: 'DELETE', path: '/agent/delete', handler: 'delete-agent', auth: 'required', style: 'A' },
    { method: 'POST', path: '/agent/delete', handler: 'delete-agent', auth: 'required', style: 'A' },
    { method: 'GET', path: '/agent/{agentId}/conversations', handler: 'list-agent-conversations', auth: 'required', callers: 'role', style: 'A' },
    { method: 'GET', path: '/agent/{agentId}/conversation/{conversationId}', handler: 'get-conversation', auth: 'required', callers: 'role', style: 'A' },
    {
      method: 'GET',
      path: '/agent/{agentId}/conversations/{conversationId}',
      handler: 'get-conversation-plural',
      auth: 'required',
      callers: 'role',
      style: 'A',
    },
    {
      method: 'POST',
      path: '/agent/{agentId}/chat',
      handler: 'chat',
      auth: 'required',
      callers: 'agent',
      style: 'A',
      timeoutSec: 300,
      rateLimit: CHAT_RATE_LIMIT,
    },
    {
      method: 'POST',
      path: '/agent/{agentId}/chat',
      host: 'stream',
      handler: 'chat-stream',
      auth: 'required',
      callers: 'agent',
      style: 'A',
      mode: 'streaming',
      timeoutSec: STREAMING_CHAT_TIMEOUT_SEC,
      rateLimit: CHAT_RATE_LIMIT,
    },
    {
      method: 'GET',
      path: '/agent/{agentId}/chat',
      host: 'stream',
      handler: 'chat-browser',
      auth: 'required',
      callers: 'agent',
      style: 'A',
      mode: 'streaming',
      timeoutSec: STREAMING_CHAT_TIMEOUT_SEC,
      rateLimit: CHAT_RATE_LIMIT,
    },
  ],
  tables: [
    // Agents; `byOwner` lists an owner's, the sparse `publicAgents` index the active public ones.
    {
      name: 'agents',
      partitionKey: 'agentId',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
        { name: 'publicAgents', partitionKey: 'publicListing', sortKey: 'createdAt' },
      ],
    },
    // `{ownerId}#{agentName}` -> agentId: agent names are unique per owner.
    { name: 'agent-names', partitionKey: 'nameKey' },
    // One counter per owner: how many agents they hold, for the per-owner limit (core/db/owner-count.ts).
    { name: 'agent-counts', partitionKey: 'ownerId' },
    // Chat conversations; listed per user and per user and agent, most recently updated first.
    {
      name: 'conversations',
      partitionKey: 'conversationId',
      numberKeys: ['updatedAt'],
      indexes: [
        { name: 'byUser', partitionKey: 'userId', sortKey: 'updatedAt' },
        { name: 'byUserAgent', partitionKey: 'userAgent', sortKey: 'updatedAt' },
      ],
    },
  ],
  provides: {
    agents: providePort({ tables: ['agents', 'agent-names', 'agent-counts'] }, ({ db }) => createAgentStore(db)),
    conversations: providePort({ tables: ['conversations'], buckets: ['blobs'] }, ({ db, blobs }) => createConversationStore(db, blobs)),
  },
  uses: ['users', 'credits', 'keys', 'keysReader', 'compute', 'usageLogs', 'searchIndex', 'embeds'],
  settings: {
    /**
     * Longer means fewer ledger lines, shorter means less held at a time (see core/credit-meter.ts).
     * Whatever the length, a run may use its whole balance: a stretch the balance cannot pay in full
     * is paid in part.
     */
    CHAT_BILLING_TICK_SEC: z.coerce
      .number()
      .min(0.1)
      .max(300)
      .default(10)
      .describe("How far ahead a chat's run time is paid with each debit while it runs, in seconds"),
    // Unused locally, where the chat service is in the same process (functions/agents/agent-runs.ts).
    AGENT_RUNS_FUNCTION_NAME: z.string().min(1).optional().meta({
      description:
        "The agents function the channels and cron functions invoke to run an owner's agent (Lambda Invoke, not the public API), on the functions granted to invoke it (cloud)",
      setBy: 'stack',
    }),
  },
});
