import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';

/**
 * Node's resolver (getaddrinfo) does not know `*.localhost` names, which browsers resolve to
 * loopback themselves and which the local platform gives each user's site (`alice.localhost:PORT`).
 * This agent resolves them as browsers do, so tests fetch a site by its real URL and the Host header
 * is the site's own name.
 */
const localhostAgent = new Agent({
  connect: {
    lookup: (
      hostname: string,
      options: LookupOptions,
      callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
        if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
        else callback(null, '127.0.0.1', 4);
        return;
      }
      dnsLookup(hostname, options, callback as never);
    },
  },
});

/** fetch, resolving `localhost` and `*.localhost` to 127.0.0.1; redirects are not followed unless asked. */
export async function siteFetch(url: string, init: UndiciRequestInit = {}): Promise<Response> {
  return (await undiciFetch(url, { redirect: 'manual', ...init, dispatcher: localhostAgent })) as unknown as Response;
}
