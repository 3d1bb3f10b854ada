import type { operations } from '../../../clients/typescript/src/index.ts';

/** A server as `/mcp-admin/{serverId}` answers it (its live source included for the owner). */
export type McpServerRecord = operations['getServer']['responses']['2XX']['content']['application/json']['data'];

/** A version snapshot as `/mcp-admin/{serverId}/versions` lists it. */
export type McpVersion = operations['listVersions']['responses']['2XX']['content']['application/json']['data']['versions'][number];
