/** The web app's entry: the shell (skip link, header, navigation), the session, and the page for the current path. */
import { render, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, forget, onRateLimited, rateLimitMessage } from './api.js';
import './styles.css';
import { interceptLinks, LocationContext, useLocation } from './router.js';
import { type LlmInfo, loadMe, SessionContext, type User } from './session.js';
import { HomePage } from './pages/home.js';
import { SearchPage } from './pages/search.js';
import { ToolPage } from './pages/tool.js';
import { CollectionsPage } from './pages/collections.js';
import { CollectionPage } from './pages/collection.js';
import { ScenarioPage } from './pages/scenarios.js';
import { SettingsPage } from './pages/settings.js';
import { ConsentPage } from './pages/consent.js';
import { EnvRequestPage } from './pages/env.js';
import { LoginPage, SignupPage } from './pages/auth.js';
import { AgentPage, AgentsPage } from './pages/agents.js';
import { RunPage } from './pages/run.js';
import { PublishPage } from './pages/publish.js';
import { PackagePage, PackagesPage } from './pages/packages.js';
import { BatchPage, ComparePage } from './pages/batches.js';
import { OperatorPage } from './pages/operator.js';

/** A page only for signed-in users: nothing until the session is known, then the page or a sign-in link. */
function signedIn(loaded: boolean, user: User | null, path: string, what: string, page: () => ComponentChildren) {
  if (!loaded) return null;
  if (user) return page();
  return (
    <p>
      <a href={`/login?next=${encodeURIComponent(path)}`}>Sign in</a> to {what}.
    </p>
  );
}

function Page({ path, user, loaded }: { path: string; user: User | null; loaded: boolean }) {
  const dec = (s: string) => decodeURIComponent(s);
  let m: RegExpMatchArray | null;
  if (path === '/') return <HomePage />;
  if (path === '/search') return <SearchPage />;
  if ((m = path.match(/^\/tools\/(.+?)\/?$/))) return <ToolPage slug={m[1].split('/').map(dec).join('/')} />;
  if (path === '/collections') return <CollectionsPage />;
  if ((m = path.match(/^\/collections\/([^/]+)\/?$/))) return <CollectionPage uid={dec(m[1])} />;
  if ((m = path.match(/^\/scenarios\/([^/]+)\/?$/))) return <ScenarioPage id={dec(m[1])} />;
  if ((m = path.match(/^\/scenario-runs\/([^/]+)\/?$/))) return <RunPage id={dec(m[1])} />;
  if ((m = path.match(/^\/scenario-batches\/([^/]+)\/compare\/([^/]+)\/?$/))) return <ComparePage id={dec(m[1])} other={dec(m[2])} />;
  if ((m = path.match(/^\/scenario-batches\/([^/]+)\/?$/))) return <BatchPage id={dec(m[1])} />;
  if (path === '/packages') return <PackagesPage />;
  if ((m = path.match(/^\/packages\/(.+?)\/?$/))) return <PackagePage name={m[1].split('/').map(dec).join('/')} />;
  if (path === '/publish') return signedIn(loaded, user, path, 'publish a package', () => <PublishPage />);
  if (path === '/operator') return <OperatorPage />;
  if (path === '/login') return <LoginPage />;
  if (path === '/signup') return <SignupPage />;
  if (path === '/settings') return signedIn(loaded, user, path, 'manage your account', () => <SettingsPage />);
  if ((m = path.match(/^\/consent\/([^/]+)\/?$/))) {
    const uid = dec(m[1]);
    return signedIn(loaded, user, path, 'sign in an MCP client', () => <ConsentPage uid={uid} />);
  }
  if ((m = path.match(/^\/env\/([^/]+)\/?$/))) {
    const token = dec(m[1]);
    return signedIn(loaded, user, path, 'enter env for a tool call', () => <EnvRequestPage token={token} />);
  }
  if (path === '/agents') return signedIn(loaded, user, path, 'make and chat with agents', () => <AgentsPage />);
  if ((m = path.match(/^\/agents\/([^/]+)\/?$/))) {
    const id = dec(m[1]);
    return signedIn(loaded, user, path, 'chat with your agents', () => <AgentPage id={id} />);
  }
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is no page here. <a href="/">Go home</a>.
      </p>
    </>
  );
}

const TITLES: [RegExp, string][] = [
  [/^\/search/, 'Search'],
  [/^\/tools\//, 'Tool'],
  [/^\/collections\/.+/, 'Collection'],
  [/^\/collections/, 'Collections'],
  [/^\/scenarios\//, 'Scenario'],
  [/^\/scenario-runs\//, 'Scenario run'],
  [/^\/scenario-batches\/[^/]+\/compare\//, 'Batch comparison'],
  [/^\/scenario-batches\//, 'Scenario batch'],
  [/^\/agents\/.+/, 'Agent'],
  [/^\/agents/, 'Agents'],
  [/^\/settings/, 'Account'],
  [/^\/consent\//, 'Sign in an MCP client'],
  [/^\/env\//, 'Env for a tool call'],
  [/^\/packages\/.+/, 'Package'],
  [/^\/packages/, 'Packages'],
  [/^\/publish/, 'Publish a package'],
  [/^\/operator/, 'Operations'],
  [/^\/login/, 'Sign in'],
  [/^\/signup/, 'Sign up'],
];

/**
 * After following a link, focus goes to the new page's main heading (once the page has drawn it), so keyboard and
 * screen-reader users start reading the new page; without one within a few seconds, to the main region.
 */
function focusHeading(main: HTMLElement): () => void {
  const focus = () => {
    const h1 = main.querySelector('h1');
    if (!h1) return false;
    h1.tabIndex = -1;
    h1.focus({ preventScroll: true });
    return true;
  };
  if (focus()) return () => undefined;
  const observer = new MutationObserver(() => focus() && stop());
  const timer = setTimeout(() => {
    stop();
    main.focus({ preventScroll: true });
  }, 5000);
  const stop = () => {
    observer.disconnect();
    clearTimeout(timer);
  };
  observer.observe(main, { childList: true, subtree: true });
  return stop;
}

/** Says that the service refused calls for a while (429): what happened and when to try again. */
function LimitNotice({ until }: { until: number }) {
  return (
    <div class="error limit-notice" role="alert" data-testid="rate-limited">
      <p>{rateLimitMessage(Math.ceil((until - Date.now()) / 1000))}</p>
    </div>
  );
}

function App() {
  const loc = useLocation();
  const [user, setUser] = useState<User | null>(null);
  const [llm, setLlm] = useState<LlmInfo>();
  const [loaded, setLoaded] = useState(false);
  const [limitedUntil, setLimitedUntil] = useState(0);
  const retry = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const asked = useRef(0);
  const refresh = useCallback(async () => {
    clearTimeout(retry.current);
    forget();
    // Only the newest question counts: an answer to an older one (from before signing in) must not win.
    const n = ++asked.current;
    try {
      const me = await loadMe();
      if (n !== asked.current) return;
      setUser(me.user);
      setLlm(me.llm);
      setLoaded(true);
    } catch (err) {
      // Not an answer about the session (refused, failed): keep what we knew and ask again later.
      if (n !== asked.current) return;
      const wait = err instanceof ApiError && err.retryAfter ? err.retryAfter * 1000 : 10_000;
      retry.current = setTimeout(() => void refresh(), wait);
    }
  }, []);
  useEffect(() => {
    void refresh();
    return onRateLimited((until) => setLimitedUntil(until));
  }, []);
  useEffect(() => {
    if (limitedUntil <= Date.now()) return;
    const t = setTimeout(() => setLimitedUntil(0), limitedUntil - Date.now());
    return () => clearTimeout(t);
  }, [limitedUntil]);
  const first = useRef(true);
  useEffect(() => {
    const t = TITLES.find(([re]) => re.test(loc.path));
    document.title = t ? `${t[1]} · Toolshed` : 'Toolshed';
  }, [loc.path]);
  useEffect(() => {
    // Not on the first load (the browser starts there already), nor when only the query changes (a filter).
    if (first.current) {
      first.current = false;
      return;
    }
    const main = document.getElementById('main');
    return main ? focusHeading(main) : undefined;
  }, [loc.path]);
  const current = (p: string) => (loc.path === p || (p !== '/' && loc.path.startsWith(p)) ? 'page' : undefined);
  return (
    <SessionContext.Provider value={{ user, llm, loaded, refresh }}>
      <LocationContext.Provider value={loc}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="site">
          <a href="/" class="brand">
            Toolshed
          </a>
          <nav aria-label="Main">
            <ul>
              <li>
                <a href="/search" aria-current={current('/search')}>
                  Tools
                </a>
              </li>
              <li>
                <a href="/collections" aria-current={current('/collections')}>
                  Collections
                </a>
              </li>
              <li>
                <a href="/packages" aria-current={current('/packages')}>
                  Packages
                </a>
              </li>
              {loaded && user && (
                <>
                  <li>
                    <a href="/agents" aria-current={current('/agents')}>
                      Agents
                    </a>
                  </li>
                  <li>
                    <a href="/publish" aria-current={current('/publish')}>
                      Publish
                    </a>
                  </li>
                </>
              )}
              {loaded &&
                (user ? (
                  <li>
                    <a href="/settings" aria-current={current('/settings')}>
                      {user.username}
                    </a>
                  </li>
                ) : (
                  <>
                    <li>
                      <a href="/login" aria-current={current('/login')}>
                        Sign in
                      </a>
                    </li>
                    <li>
                      <a href="/signup" aria-current={current('/signup')}>
                        Sign up
                      </a>
                    </li>
                  </>
                ))}
            </ul>
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {limitedUntil > Date.now() && <LimitNotice until={limitedUntil} />}
          <Page path={loc.path} user={user} loaded={loaded} key={loc.path} />
        </main>
        <footer class="site">
          <a href="/docs">API documentation</a>
        </footer>
      </LocationContext.Provider>
    </SessionContext.Provider>
  );
}

interceptLinks();
render(<App />, document.getElementById('app')!);
