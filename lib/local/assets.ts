import type { AreaModule, Host } from '../manifest/types.ts';
import { assetPaths, buildAsset } from '../assets/build-asset.ts';

export interface ServedAsset {
  readonly body: string;
  readonly contentType: string;
  readonly cacheControl: string;
  /** 200 unless set (a redirect: 308 with a `location` header). */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Looks up the asset at `path` of `host`; null when none is there. */
export type LocalAssets = (host: Host, path: string) => Promise<ServedAsset | null>;

/**
 * The areas' browser assets (the widget), as the local platform serves them: each built from its
 * source on its first request (esbuild, in memory, tens of milliseconds) and kept, so `npm start`
 * stays one command with no separate build step. A source edit needs a restart, as for handlers.
 */
export function localAssets(modules: readonly AreaModule[]): LocalAssets {
  const byPath = new Map<string, { build: () => Promise<string>; versioned: boolean }>();
  for (const asset of modules.flatMap((area) => area.assets)) {
    let built: Promise<string> | undefined;
    const build = () => {
      built ??= buildAsset(asset);
      // A failed build is not kept: the next request tries again.
      built.catch(() => (built = undefined));
      return built;
    };
    const paths = assetPaths(asset);
    byPath.set(`${asset.host}${paths.current}`, { build, versioned: false });
    byPath.set(`${asset.host}${paths.versioned}`, { build, versioned: true });
  }
  return async (host, path) => {
    const found = byPath.get(`${host}${path}`);
    if (found === undefined) return null;
    return {
      body: await found.build(),
      contentType: 'application/javascript; charset=utf-8',
      // As the cloud's: the versioned path never changes, the current one is revalidated.
      cacheControl: found.versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
    };
  };
}

/** Hosts some area publishes an asset on (their URL is configured then, as for hosts with routes). */
export function assetHosts(modules: readonly AreaModule[]): Host[] {
  return modules.flatMap((area) => area.assets.map((asset) => asset.host));
}
