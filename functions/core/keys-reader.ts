import type { UserActor } from './auth/actor.ts';

/**
 * How user-code runs get the owner's third-party keys (SPEC 4.13): actions as `event.keys`, MCP
 * servers as `SERVICENAME_KEY` variables, agents as `SVC_KEYS_JSON`. Implemented by the keys vault;
 * it decrypts only the keys asked for, only the owner's, and for role-token callers only the keys
 * attached to that token.
 */
export interface KeysReader {
  /** Plain values by service name; names the owner has no key for are absent. */
  readKeys(caller: UserActor, ownerId: string, serviceNames: readonly string[]): Promise<Record<string, string>>;
  /**
   * Every key of the owner the caller's run may receive, by service name: what agents and MCP
   * servers get. One read of the owner's keys, not a listing followed by a read per key.
   */
  readAllKeys(caller: UserActor, ownerId: string): Promise<Record<string, string>>;
}

/** Environment variable an MCP server reads a key from: upper-cased, non-alphanumerics as `_`. */
export function keyEnvironmentName(serviceName: string): string {
  return `${serviceName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_KEY`;
}
