/** The web app's entry: the shell (skip link, header, navigation), the session, and the page for the current path. */
import { render, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import './styles.css';
import { interceptLinks, LocationContext, useLocation } from './router.js';
import { loadMe, SessionContext, type User } from './session.js';
import { HomePage } from './pages/home.js';
import { SearchPage } from './pages/search.js';
import { ToolPage } from './pages/tool.js';
import { CollectionsPage } from './pages/collections.js';
import { CollectionPage } from './pages/collection.js';
import { ScenarioPage } from './pages/scenarios.js';
import { SettingsPage } from './pages/settings.js';
import { LoginPage, SignupPage } from './pages/auth.js';
import { AgentPage, AgentsPage } from './pages/agents.js';

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
  if (path === '/login') return <LoginPage />;
  if (path === '/signup') return <SignupPage />;
  if (path === '/settings') return signedIn(loaded, user, path, 'manage your account', () => <SettingsPage />);
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
  [/^\/agents\/.+/, 'Agent'],
  [/^\/agents/, 'Agents'],
  [/^\/settings/, 'Account'],
  [/^\/login/, 'Sign in'],
  [/^\/signup/, 'Sign up'],
];

function App() {
  const loc = useLocation();
  const [user, setUser] = useState<User | null>(null);
  const [loaded, setLoaded] = useState(false);
  const refresh = useCallback(async () => {
    setUser(await loadMe());
    setLoaded(true);
  }, []);
  useEffect(() => {
    void refresh();
  }, []);
  useEffect(() => {
    const t = TITLES.find(([re]) => re.test(loc.path));
    document.title = t ? `${t[1]} · Toolshed` : 'Toolshed';
    // Move focus to the new page's content for keyboard and screen-reader users (not on the first load).
    const main = document.getElementById('main');
    if (main && document.activeElement && document.activeElement !== document.body) main.focus();
  }, [loc.path, loc.query.toString()]);
  const current = (p: string) => (loc.path === p || (p !== '/' && loc.path.startsWith(p)) ? 'page' : undefined);
  return (
    <SessionContext.Provider value={{ user, loaded, refresh }}>
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
              {loaded && user && (
                <li>
                  <a href="/agents" aria-current={current('/agents')}>
                    Agents
                  </a>
                </li>
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
