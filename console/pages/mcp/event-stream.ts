/**
 * MCP's streamable HTTP answers as JSON or as `text/event-stream`; these read the JSON-RPC messages
 * out of either. A module of its own, with no browser or Preact imports, so unit tests run it.
 */
export interface RpcMessage {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export function jsonMessages(text: string): RpcMessage[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return (Array.isArray(parsed) ? parsed : [parsed]).filter((m): m is RpcMessage => typeof m === 'object' && m !== null);
  } catch {
    return [];
  }
}

/** The JSON messages of a `text/event-stream` body: each event's `data:` lines joined. */
export function eventStreamMessages(text: string): RpcMessage[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '')
    .flatMap(jsonMessages);
}
