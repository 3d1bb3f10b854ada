import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { createPlatformClient, dataOf } from '../clients/typescript/src/index.ts';
import { ApiContext, createApi, discover, useApi, type Api } from './api.ts';
import { apiBaseOf, loadConfig, type ConsoleConfig } from './config.ts';
import { useRoute, type Route } from './router.ts';
import { forgetToken, storedToken } from './session.ts';
import { SignIn } from './pages/sign-in.tsx';
import { ErrorNote, Loading } from './ui/status.tsx';

/** A page of the console: the first segment of the route picks it; it reads the rest itself. */
export interface PageProps {
  readonly route: Route;
}

interface PageEntry {
  /** The route's first segment (`agents` for `#/agents/...`); '' is home. */
  readonly key: string;
  readonly label: string;
  readonly group: 'Overview' | 'Build' | 'Data' | 'Automate' | 'Observe' | 'Account';
  /** Each page is a chunk of its own, loaded when first shown. */
  readonly load: () => Promise<{ default: ComponentType<PageProps> }>;
}

export const PAGES: readonly PageEntry[] = [
  { key: '', label: 'Home', group: 'Overview', load: () => import('./pages/home.tsx') },
  { key: 'agents', label: 'Agents', group: 'Build', load: () => import('./pages/agents.tsx') },
  { key: 'actions', label: 'Actions', group: 'Build', load: () => import('./pages/actions.tsx') },
  { key: 'mcp', label: 'MCP servers', group: 'Build', load: () => import('./pages/mcp-servers.tsx') },
  { key: 'skills', label: 'Skills', group: 'Build', load: () => import('./pages/skills.tsx') },
  { key: 'knowledge', label: 'Knowledge', group: 'Data', load: () => import('./pages/knowledge.tsx') },
  { key: 'websites', label: 'Website', group: 'Data', load: () => import('./pages/websites.tsx') },
  { key: 'cron', label: 'Cron jobs', group: 'Automate', load: () => import('./pages/cron.tsx') },
  { key: 'channels', label: 'Channels', group: 'Automate', load: () => import('./pages/channels.tsx') },
  { key: 'embeds', label: 'Embeds', group: 'Automate', load: () => import('./pages/embeds.tsx') },
  { key: 'logs', label: 'Logs', group: 'Observe', load: () => import('./pages/logs.tsx') },
  { key: 'account', label: 'Account', group: 'Account', load: () => import('./pages/account.tsx') },
];

type Boot =
  | { kind: 'loading' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'signed-out'; config: ConsoleConfig }
  | { kind: 'signed-in'; config: ConsoleConfig; api: Api };

export function App() {
  const [boot, setBoot] = useState<Boot>({ kind: 'loading' });
  const signOut = () => {
    forgetToken();
    setBoot((b) => (b.kind === 'signed-in' ? { kind: 'signed-out', config: b.config } : b));
  };
  const signIn = async (config: ConsoleConfig, token: string) => {
    const baseUrl = apiBaseOf(config);
    // The token is checked before the console shows anything: a wrong one is refused on the sign-in page.
    await dataOf(createPlatformClient({ baseUrl, token }).GET('/user/info'));
    const hosts = await discover(baseUrl);
    setBoot({ kind: 'signed-in', config, api: createApi(baseUrl, token, hosts, signOut) });
  };
  useEffect(() => {
    loadConfig().then(
      async (config) => {
        const token = storedToken();
        if (token === null) return setBoot({ kind: 'signed-out', config });
        await signIn(config, token).catch(() => {
          forgetToken();
          setBoot({ kind: 'signed-out', config });
        });
      },
      (error: unknown) => setBoot({ kind: 'failed', error }),
    );
  }, []);

  if (boot.kind === 'loading') return <Loading what="the console" />;
  if (boot.kind === 'failed') return <ErrorNote title="The console could not start" error={boot.error} />;
  if (boot.kind === 'signed-out') return <SignIn config={boot.config} onToken={(token) => signIn(boot.config, token)} />;
  return (
    <ApiContext.Provider value={boot.api}>
      <Shell />
    </ApiContext.Provider>
  );
}

function Shell() {
  const route = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);
  const entry = PAGES.find((page) => page.key === (route.segments[0] ?? '')) ?? null;
  useEffect(() => setMenuOpen(false), [route.path]);
  return (
    <div class="shell">
      <a class="skip-link" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/">
          Agent Platform
        </a>
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <UserBadge />
      </header>
      <nav id="nav" class={`nav${menuOpen ? ' nav-open' : ''}`} aria-label="Console">
        {(['Overview', 'Build', 'Data', 'Automate', 'Observe', 'Account'] as const).map((group) => (
          <div class="nav-group" key={group}>
            <p class="nav-group-title">{group}</p>
            <ul>
              {PAGES.filter((page) => page.group === group).map((page) => (
                <li key={page.key}>
                  <a href={`#/${page.key}`} aria-current={page === entry ? 'page' : undefined}>
                    {page.label}
                  </a>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {entry === null ? <NotFound /> : <LazyPage entry={entry} route={route} key={entry.key} />}
      </main>
    </div>
  );
}

function UserBadge() {
  const api = useApi();
  const [info, setInfo] = useState<{ alias: string | null; email: string | null; credits: number } | null>(null);
  useEffect(() => {
    dataOf(api.client.GET('/user/info')).then(setInfo, () => setInfo(null));
  }, [api]);
  return (
    <div class="user">
      {info === null ? null : (
        <span class="user-name">
          {info.alias ?? info.email ?? 'no alias yet'} · <span aria-label="credits">{info.credits.toLocaleString()} credits</span>
        </span>
      )}
      <button type="button" class="button button-link" onClick={api.signOut}>
        Sign out
      </button>
    </div>
  );
}

const loaded = new Map<string, ComponentType<PageProps>>();

function LazyPage(props: { entry: PageEntry; route: Route }) {
  const [Component, setComponent] = useState<ComponentType<PageProps> | null>(() => loaded.get(props.entry.key) ?? null);
  const [error, setError] = useState<unknown>(undefined);
  // LazyPage is keyed by the page, so this runs once per page shown; a page loaded before renders at once.
  useEffect(() => {
    if (loaded.has(props.entry.key)) return;
    props.entry.load().then(
      (module) => {
        loaded.set(props.entry.key, module.default);
        setComponent(() => module.default);
      },
      (e: unknown) => setError(e),
    );
  }, [props.entry]);
  if (error !== undefined) return <ErrorNote title="This page could not load" error={error} />;
  if (Component === null) return <Loading what={props.entry.label.toLowerCase()} />;
  return <Component route={props.route} />;
}

function NotFound() {
  return (
    <section class="page">
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        No console page is at this address. <a href="#/">Go home</a>.
      </p>
    </section>
  );
}
