import { createBucketObjects } from '../../functions/core/files/bucket-objects.ts';
import { siteObjectKey } from '../../functions/websites/websites-paths.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { get, keepAliveAgent } from './http-load.ts';
import { measured, versus } from './stats.ts';

const PAGE_BYTES = 10 * 1024;
const WARM_UP = 50;
const ROUNDS = 20;
const PER_ROUND = 25;
const SITE = 'site host, 10 KB page';
const STORE = 'store read, same object';

/**
 * A 10 KB page through the site host (HTTP on the site port: the alias read, the object streamed
 * from s3rver, the headers) next to the same object read from the store directly (one GetObject,
 * the body read whole), interleaved in one run. The difference is what serving adds to storage;
 * the alias read, a part of it, is measured alone to tell whether caching aliases would matter.
 */
export const websitesBench: BenchModule = {
  name: 'websites',
  async run({ progress, defer }) {
    progress('websites: starting the platform');
    const platform = await startTestPlatform();
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
    const store = measured(STORE, samples.store, { note: 'GetObject from s3rver, body read whole' });
    const site = measured(SITE, samples.site, { note: 'GET {alias}.{site host}/ over keep-alive HTTP, body read whole' });
    const alias = measured('alias read (getAliasClaim)', samples.alias, { note: 'the per-request lookup an in-memory alias cache would save' });
    return [versus(site, store), store, alias];
  },
};
