import type { IncomingMessage } from 'node:http';

/** Where a request was sent, as its public URL's scheme and `host[:port]`. */
export interface RequestOrigin {
  readonly proto: 'http' | 'https';
  readonly host: string;
}

const HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The origin a request was sent to, as the local server tells handlers in the events it builds (the
 * part API Gateway's domain name and `X-Forwarded-Proto` play in the cloud). The local server speaks
 * plain HTTP; only when the operator trusts the proxy in front (TRUST_FORWARDED_HEADERS) do its
 * `Forwarded` (RFC 7239) or `X-Forwarded-Host` / `X-Forwarded-Proto` headers say otherwise. A proxy
 * chain's first entry is the one the client reached. A value that is not a host or a scheme is
 * ignored, as is every forwarded header from a client the operator does not trust.
 */
export function requestOrigin(req: IncomingMessage, trustForwarded: boolean): RequestOrigin {
  const own = validHost(req.headers.host) ?? 'localhost';
  if (!trustForwarded) return { proto: 'http', host: own };
  const forwarded = firstForwardedElement(req.headers.forwarded);
  const host = validHost(forwarded.get('host')) ?? validHost(firstValue(req.headers['x-forwarded-host'])) ?? own;
  const proto = validProto(forwarded.get('proto')) ?? validProto(firstValue(req.headers['x-forwarded-proto'])) ?? 'http';
  return { proto, host };
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  return text?.split(',')[0]?.trim();
}

function validHost(value: string | undefined): string | undefined {
  return value !== undefined && HOST.test(value) ? value.toLowerCase() : undefined;
}

function validProto(value: string | undefined): 'http' | 'https' | undefined {
  const proto = value?.toLowerCase();
  return proto === 'http' || proto === 'https' ? proto : undefined;
}

/** The parameters of a `Forwarded` header's first element (`for=…;host=…;proto=…`), names lower-cased, quotes removed. */
function firstForwardedElement(header: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  // Quoted values may hold commas and semicolons (`host="[::1]:80"` holds neither, but `for` may).
  const element = /^(?:[^,"]|"(?:[^"\\]|\\.)*")*/.exec(header ?? '')?.[0] ?? '';
  for (const pair of element.match(/(?:[^;"]|"(?:[^"\\]|\\.)*")+/g) ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const value = pair.slice(eq + 1).trim();
    pairs.set(pair.slice(0, eq).trim().toLowerCase(), value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value);
  }
  return pairs;
}
