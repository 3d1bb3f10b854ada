import type { TableSpec } from './types.ts';

/**
 * Every table of the platform. Invariants are single-item conditional writes, so uniqueness
 * (aliases, token digests) lives in tables whose key is the unique value.
 */
export const tables = [
  { name: 'users', partitionKey: 'userId', indexes: [{ name: 'byKind', partitionKey: 'kind', sortKey: 'createdAt' }], numberKeys: ['createdAt'] },
  // alias -> userId; the key makes aliases unique.
  { name: 'aliases', partitionKey: 'alias' },
  // Access-token metadata, one item per token id; `byUser` lists a user's tokens.
  {
    name: 'tokens',
    partitionKey: 'tokenId',
    numberKeys: ['createdAt'],
    indexes: [{ name: 'byUser', partitionKey: 'userId', sortKey: 'createdAt' }],
  },
  // SHA-256 digest -> tokenId, read with a strongly consistent GetItem on every request.
  { name: 'token-digests', partitionKey: 'digest' },
  // Third-party keys, sealed (AES-256-GCM; KMS-wrapped data keys in the cloud).
  { name: 'keys', partitionKey: 'userId', sortKey: 'serviceName' },
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
  // Actions; the id is the key (a supplied id that exists is a 409). `byOwner` lists an owner's, the
  // sparse `publicActions` index the public ones others may run (active and deprecated).
  {
    name: 'actions',
    partitionKey: 'actionId',
    numberKeys: ['createdAt'],
    indexes: [
      { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
      { name: 'publicActions', partitionKey: 'publicListing', sortKey: 'createdAt' },
    ],
  },
  // MCP servers (SPEC 4.4); `byOwner` lists an owner's, the sparse `publicServers` index the public ones.
  {
    name: 'mcp-servers',
    partitionKey: 'serverId',
    numberKeys: ['createdAt'],
    indexes: [
      { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
      { name: 'publicServers', partitionKey: 'publicListing', sortKey: 'createdAt' },
    ],
  },
  // `{ownerId}#{serverName}` -> serverId: MCP server names are unique per owner.
  { name: 'mcp-server-names', partitionKey: 'nameKey' },
  // Append-only MCP versions; each written with attribute_not_exists, so a number is never written
  // twice. Sources past a threshold live in the blob store (content-addressed keys).
  { name: 'mcp-versions', partitionKey: 'serverId', sortKey: 'version', numberKeys: ['version'] },
  // Credit grants and debits, newest last by entry id (time-ordered).
  { name: 'credit-ledger', partitionKey: 'userId', sortKey: 'entryId' },
  // Fixed-window counters; items expire after their window.
  { name: 'rate-limits', partitionKey: 'bucketKey', ttlAttribute: 'expiresAt' },
  // OAuth authorizations started but not yet completed (SPEC 4.13), keyed by their single-use state.
  { name: 'oauth-states', partitionKey: 'state', ttlAttribute: 'expiresAt' },
  // One record per resource invocation.
  {
    name: 'usage-logs',
    partitionKey: 'requestId',
    ttlAttribute: 'expiresAt',
    numberKeys: ['createdAt'],
    indexes: [
      { name: 'byUser', partitionKey: 'userId', sortKey: 'createdAt' },
      { name: 'byRoot', partitionKey: 'rootRequestId', sortKey: 'createdAt' },
    ],
  },
] as const satisfies readonly TableSpec[];

export type TableName = (typeof tables)[number]['name'];
