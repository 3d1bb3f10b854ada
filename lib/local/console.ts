import { buildConsole, CONSOLE_CSP, CONSOLE_PATH, type ConsoleFile } from '../console/build-console.ts';
import type { ConsoleConfig } from '../console/console-config.ts';
import type { LocalAssets, ServedAsset } from './assets.ts';

const SIGN_IN: ConsoleConfig = {
  signIn: { kind: 'token', hint: 'The operator token is in .data/admin-token; the operator creates users and their first token (POST /admin/users).' },
};

/**
 * The web console on the local API's origin at `/console/`: built from `console/` on its first
 * request (esbuild, in memory) and kept, as the widget is, so `npm start` stays one command. It is
 * served on the API's origin, so it calls the API there (`config.json` names no other).
 */
export function localConsole(): LocalAssets {
  let built: Promise<Map<string, ConsoleFile>> | undefined;
  const files = () => {
    built ??= buildConsole().then((list) => new Map(list.map((file) => [file.path, file])));
    // A failed build is not kept: the next request tries again.
    built.catch(() => (built = undefined));
    return built;
  };
  const config: ServedAsset = {
    body: JSON.stringify(SIGN_IN),
    contentType: 'application/json; charset=utf-8',
    cacheControl: 'no-cache',
  };
  return async (host, path) => {
    if (host !== 'base' || (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`))) return null;
    if (path === CONSOLE_PATH)
      return { body: '', contentType: 'text/plain; charset=utf-8', cacheControl: 'no-cache', status: 308, headers: { location: `${CONSOLE_PATH}/` } };
    const relative = path.slice(CONSOLE_PATH.length + 1) || 'index.html';
    if (relative === 'config.json') return config;
    const file = (await files()).get(relative);
    if (file === undefined) return null;
    return {
      body: file.body,
      contentType: file.contentType,
      cacheControl: file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      headers: file.path === 'index.html' ? { 'content-security-policy': CONSOLE_CSP, 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' } : {},
    };
  };
}

/** Both: the areas' assets first, then the console. */
export function withConsole(assets: LocalAssets, console: LocalAssets): LocalAssets {
  return async (host, path) => (await assets(host, path)) ?? (await console(host, path));
}
