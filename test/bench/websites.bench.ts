import { createReadStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createBucketObjects } from '../../functions/core/files/bucket-objects.ts';
import { siteObjectKey } from '../../functions/websites/websites-paths.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { closeServer, get, interleaved, keepAliveAgent, perSecond, type Round } from './http-load.ts';
import { measured, versus } from './stats.ts';

const PAGE_BYTES = 10 * 1024;
const WARM_UP = 50;
const ROUNDS = 20;
const PER_ROUND = 25;
const SITE = 'site host, 10 KB page';
const STORE = 'store read, same object';
const SMALL_BYTES = 1024;
const SMALL_CONCURRENT = { blocks: 6, perBlock: 200, concurrency: 8 };
// Read by test/bench/targets.ts.
const SMALL_SITE = 'site host, 1 KB file (c=8)';
const SMALL_BARE = 'bare static file server, same file (c=8)';

/**
 * What a bare static file server does for each request: stat the file (for its ETag and length),
 * stream it from disk. No alias, no store: the baseline for serving a site file.
 */
async function startStaticServer(dir: string): Promise<Server> {
  const server = createServer((req, res) => {
    const file = join(dir, 'small.html');
    stat(file).then(
      (info) => {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(info.size),
          etag: `"${info.size.toString(16)}-${info.mtimeMs.toString(16)}"`,
        });
        createReadStream(file).pipe(res);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * A 10 KB page through the site host (HTTP on the site port: the alias read, the object streamed
 * from s3rver, the headers) next to the same object read from the store directly (one GetObject,
 * the body read whole), interleaved in one run. The difference is what serving adds to storage;
 * the alias read, a part of it, is measured alone: locally the owner is cached in memory (issue 33).
 */
export const websitesBench: BenchModule = {
  name: 'websites',
  async run({ progress, defer, tempDir }) {
    progress('websites: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'benchsite' });
    const page = `<!doctype html><title>bench</title><p>${'x'.repeat(PAGE_BYTES - 40)}</p>`;
    const uploaded = await platform.api('POST', '/website/upload', { token: user.token, body: { fileName: 'index.html', content: page } });
    if (uploaded.status !== 200) throw new Error(`upload failed: ${uploaded.status} ${uploaded.text}`);
    const objects = createBucketObjects(platform.running.ports.config, 'websites');
    const key = siteObjectKey(user.userId, 'index.html');
    const agent = keepAliveAgent();
    defer(() => agent.destroy());
    // The site on its own origin, `benchsite.localhost:PORT`: Node's resolver does not know `*.localhost`, so by address and Host.
    const sitePort = new URL(platform.siteUrl!).port;
    const target = { name: SITE, url: `http://127.0.0.1:${sitePort}/`, headers: { host: `benchsite.localhost:${sitePort}` } };

    const viaSite = async () => {
      const t = performance.now();
      const reply = await get(agent, target);
      const ms = elapsedSince(t);
      if (reply.status !== 200 || reply.body.length !== page.length) throw new Error(`site host answered ${reply.status} with ${reply.body.length} bytes`);
      return ms;
    };
    const viaStore = async () => {
      const t = performance.now();
      const object = await objects.get(key);
      const ms = elapsedSince(t);
      if (object?.body.length !== page.length) throw new Error('the store read found another object');
      return ms;
    };

    const users = platform.running.ports.users;
    const viaAlias = async () => {
      const t = performance.now();
      const claim = await users.getAliasClaim('benchsite');
      const ms = elapsedSince(t);
      if (claim?.userId !== user.userId) throw new Error('the alias read found another owner');
      return ms;
    };

    progress('websites: warm-up');
    for (let i = 0; i < WARM_UP; i++) {
      await viaSite();
      await viaStore();
    }
    progress('websites: measuring');
    const samples = { site: [] as number[], store: [] as number[], alias: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternated, so neither always runs first.
      const steps = [
        async () => {
          for (let i = 0; i < PER_ROUND; i++) samples.site.push(await viaSite());
        },
        async () => {
          for (let i = 0; i < PER_ROUND; i++) samples.store.push(await viaStore());
        },
        async () => {
          for (let i = 0; i < PER_ROUND; i++) samples.alias.push(await viaAlias());
        },
      ];
      for (let s = 0; s < steps.length; s++) await steps[(round + s) % steps.length]!();
    }

    // A 1 KB file at 8 concurrent, next to a bare static file server serving the same bytes from disk.
    const small = `<!doctype html><title>s</title><p>${'y'.repeat(SMALL_BYTES - 38)}</p>`;
    const smallUploaded = await platform.api('POST', '/website/upload', { token: user.token, body: { fileName: 'small.html', content: small } });
    if (smallUploaded.status !== 200) throw new Error(`upload failed: ${smallUploaded.status} ${smallUploaded.text}`);
    const staticDir = await tempDir('static');
    await writeFile(join(staticDir, 'small.html'), small);
    const bare = await startStaticServer(staticDir);
    defer(() => closeServer(bare));
    const smallTargets = [
      { name: SMALL_SITE, url: `http://127.0.0.1:${sitePort}/small.html`, headers: { host: `benchsite.localhost:${sitePort}` } },
      { name: SMALL_BARE, url: `http://127.0.0.1:${(bare.address() as AddressInfo).port}/small.html` },
    ];
    for (const t of smallTargets) {
      const reply = await get(agent, t);
      if (reply.status !== 200 || reply.body !== small) throw new Error(`${t.name} answered ${reply.status} with ${reply.body.length} bytes`);
    }
    progress('websites: 1 KB file at 8 concurrent');
    await interleaved(agent, smallTargets, { blocks: 1, perBlock: WARM_UP * 2, concurrency: SMALL_CONCURRENT.concurrency });
    const rounds = await interleaved(agent, smallTargets, SMALL_CONCURRENT);
    const smallRow = (name: string, round: Round, note: string) => measured(name, round.samples, { perSecond: perSecond(round), note });
    const bareRow = smallRow(SMALL_BARE, rounds.get(SMALL_BARE)!, 'node:http: stat, then the file streamed from disk');
    const siteRound = rounds.get(SMALL_SITE)!;
    const siteSmall = smallRow(
      SMALL_SITE,
      siteRound,
      `ops/s 1:${(bareRow.perSecond! / perSecond(siteRound)).toFixed(1)} of the bare static server; GET {alias}.{site host}/small.html`,
    );

    const store = measured(STORE, samples.store, { note: 'GetObject from s3rver, body read whole' });
    const site = measured(SITE, samples.site, { note: 'GET {alias}.{site host}/ over keep-alive HTTP, body read whole' });
    const alias = measured('alias read (getAliasClaim)', samples.alias, {
      note: 'the per-request owner lookup, answered from the local alias cache once read (user.store.ts)',
    });
    return [versus(site, store), store, alias, versus(siteSmall, bareRow), bareRow];
  },
};
