import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '../../functions/core/db/dynamo.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import type { BenchModule } from './harness.ts';
import { closeServer, get, interleaved, keepAliveAgent, perSecond, type Round, type Target } from './http-load.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';

const WARM_UP = 100;
const SEQUENTIAL = { blocks: 8, perBlock: 75, concurrency: 1 };
const CONCURRENT = { blocks: 8, perBlock: 100, concurrency: 8 };

const HELLO = 'bare node:http hello';
const BASE_1 = 'bare http, 1 Get';
const BASE_SAME = 'bare http, same BatchGet';
const PLATFORM_TOKEN = 'platform /user/info, token';
const PLATFORM_KEY = 'platform /user/info, secret key';

interface Reads {
  readonly userId: string;
  readonly tokenId: string;
}

/**
 * What the platform is measured against: a bare `node:http` handler in the same process. `/hello`
 * answers a fixed body without the store (issue 11's baseline: what node itself can do here);
 * the others use the same dynalite through the platform's own document client. `/one` is the
 * store read the answer needs; `/same` makes the read a token-authenticated `/user/info` makes
 * (the token and the account it names, in one BatchGetItem; the handler answers from that read),
 * so platform ÷ `/same` is the kernel's own cost. A token cannot need less: both records must be
 * read on every request to honour revocation, and the account is the answer.
 */
async function startBaseline(db: Db, reads: Reads): Promise<Server> {
  const users = db.table('users');
  const getUser = async () => (await db.doc.send(new GetCommand({ TableName: users, Key: { userId: reads.userId }, ConsistentRead: true }))).Item;
  const hello = JSON.stringify({ hello: 'world' });
  const server = createServer((req, res) => {
    if (req.url === '/hello') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(hello) });
      res.end(hello);
      return;
    }
    const answer = async () => {
      if (req.url === '/same') {
        const out = await db.doc.send(
          new BatchGetCommand({
            RequestItems: {
              [db.table('tokens')]: { Keys: [{ tokenId: reads.tokenId }], ConsistentRead: true },
              [users]: { Keys: [{ userId: reads.userId }], ConsistentRead: true },
            },
          }),
        );
        return out.Responses?.[users]?.[0];
      }
      return getUser();
    };
    answer().then(
      (item) => {
        const body = JSON.stringify(item ?? null);
        res.writeHead(item ? 200 : 404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      (error: unknown) => {
        res.writeHead(500).end(String(error));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export const userInfoBench: BenchModule = {
  name: 'user-info',
  async run({ progress, defer }) {
    progress('user-info: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'benchuser' });
    const reads: Reads = { userId: user.userId, tokenId: user.tokenId };

    const baseline = await startBaseline(platform.running.ports.db, reads);
    defer(() => closeServer(baseline));
    const baseUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}`;
    const agent = keepAliveAgent();
    defer(() => agent.destroy());

    const targets: Target[] = [
      { name: HELLO, url: `${baseUrl}/hello` },
      { name: BASE_1, url: `${baseUrl}/one` },
      { name: BASE_SAME, url: `${baseUrl}/same` },
      { name: PLATFORM_TOKEN, url: `${platform.url}/user/info`, headers: { authorization: `Bearer ${user.token}` } },
      { name: PLATFORM_KEY, url: `${platform.url}/user/info`, headers: { 'x-svc-userid': user.userId, 'x-svc-secretkey': user.secretKey } },
    ];

    // Every target must answer for this user, or the comparison is between different work.
    for (const target of targets.filter((t) => t.name !== HELLO)) {
      const reply = await get(agent, target);
      const parsed = JSON.parse(reply.body) as { userId?: string; data?: { userId?: string } };
      if (reply.status !== 200 || (parsed.data?.userId ?? parsed.userId) !== user.userId) {
        throw new Error(`${target.name}: unexpected answer ${reply.status} ${reply.body.slice(0, 200)}`);
      }
    }
    // Warm-up: JIT, sockets, and the token's first-use `lastUsedAt` write, which then stays quiet for a minute.
    progress('user-info: warm-up');
    await interleaved(agent, targets, { blocks: 1, perBlock: WARM_UP, concurrency: 1 });
    await interleaved(agent, targets, { blocks: 1, perBlock: WARM_UP, concurrency: CONCURRENT.concurrency });

    progress('user-info: sequential');
    const sequential = await interleaved(agent, targets, SEQUENTIAL);
    progress('user-info: concurrency 8');
    const concurrent = await interleaved(agent, targets, CONCURRENT);

    return [...rowsFor(sequential, 'seq'), ...rowsFor(concurrent, 'c=8')];
  },
};

function rowsFor(rounds: Map<string, Round>, label: string): MeasuredRow[] {
  const row = (name: string, note?: string) => {
    const round = rounds.get(name)!;
    return measured(`${name} (${label})`, round.samples, { perSecond: perSecond(round), ...(note ? { note } : {}) });
  };
  const hello = row(HELLO, "no store: what node:http itself answers here, the issue's baseline");
  // Issue 11 states the target as throughput against bare node:http: "1:N" is hello's ops/s over this row's.
  const share = (name: string, note?: string) => {
    const measuredRow = row(name);
    const ratio = `ops/s 1:${(hello.perSecond! / measuredRow.perSecond!).toFixed(1)} of bare hello`;
    return versus({ ...measuredRow, note: note ? `${ratio}; ${note}` : ratio }, hello);
  };
  const base1 = share(BASE_1, 'the floor for any answer that reads the account once');
  const same = versus(share(BASE_SAME), base1);
  return [
    hello,
    base1,
    same,
    versus(versus(share(PLATFORM_TOKEN), base1), same),
    versus(share(PLATFORM_KEY, label === 'seq' ? 'secret-key auth reads the account, and the handler answers from that read: 1 Get' : undefined), base1),
  ];
}
