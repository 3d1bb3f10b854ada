/**
 * The bare servers the MCP and chat benches set beside the platform: the same store calls as an
 * endpoint, in the same steps, through the platform's own store code, with none of its kernel. What
 * the platform takes over such a server is its own cost; what the server takes over the runtime is
 * the store's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { digestSecret, readSecret } from '../../functions/core/auth/secrets.ts';
import type { Ports } from '../../functions/ports.ts';

/** What a paid run has in hand once its calls before the run are done. */
export interface Admitted<R> {
  readonly requestId: string;
  readonly userId: string;
  /** The record the run is of (the server or the agent). */
  readonly record: R;
  /** The owner's keys, as `readAllKeys` gives them. */
  readonly keys: Record<string, string>;
  /** The debit's ledger line, still being written. */
  readonly ledgerLine: Promise<unknown>;
}

/**
 * The calls before a paid run, as the endpoints make them: auth (one BatchGetItem) > the rate limit
 * | the record > the debit | the owner's keys. The token must carry its locator.
 */
export function admitPaidRun<R extends { readonly ownerId: string }>(
  ports: Ports,
  token: string,
  readRecord: () => Promise<R | null>,
  cost: number,
): () => Promise<Admitted<R>> {
  const secret = readSecret('userToken', token);
  if (secret === null) throw new Error('the bench user token has no locator');
  const digest = digestSecret(token);
  let n = 0;
  return async () => {
    const requestId = `bench-floor-${n++}`;
    const found = await ports.credentials.findToken(digest, secret.locator);
    if (found === null) throw new Error('the bench user token was not found');
    const { userId, tokenId } = found.token;
    const [, record] = await Promise.all([ports.rateLimiter.consume(`bench-floor:${userId}`, { limit: 1_000_000, windowSec: 60 }), readRecord()]);
    if (record === null) throw new Error('the bench record was not found');
    const caller: UserActor = { kind: 'user', userId, alias: null, isAdmin: false, via: 'user-token', tokenId, scope: 'full', roleKeys: null };
    const [debit, keys] = await Promise.all([
      ports.credits.debitWithPendingLine(userId, cost, { reason: 'bench floor', requestId }),
      ports.keysReader.readAllKeys(caller, record.ownerId),
    ]);
    return { requestId, userId, record, keys, ledgerLine: debit.line };
  };
}

/** A loopback server answering each POST body with `answer`'s text (500 with the error otherwise); its URL. */
export async function startBareServer(answer: (body: string) => Promise<string>, contentType: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answer(Buffer.concat(chunks).toString('utf8')).then(
        (text) => res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) }).end(text),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
