import { useEffect, useRef } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigation } from 'react-router';
import { session, useSession } from '../auth/session.ts';
import { settings } from '../settings.ts';

/** Header, main area and footer of every page; moves keyboard focus to the new page's heading on navigation. */
export function Shell() {
  const signedIn = useSession();
  const location = useLocation();
  const navigation = useNavigation();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const heading = main.current?.querySelector<HTMLElement>('h1');
    if (heading) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }, [location.pathname]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <Link to={signedIn ? '/app' : '/'} className="brand" aria-label="petsing home">
          <span aria-hidden="true" className="brand-mark" />
          petsing
        </Link>
        <nav aria-label="Main">
          {signedIn ? (
            <ul className="nav-list">
              <li>
                <NavLink to="/app/new">New video</NavLink>
              </li>
              <li>
                <NavLink to="/app" end>
                  My videos
                </NavLink>
              </li>
              <li>
                <NavLink to="/account">Plan</NavLink>
              </li>
              <li>
                <NavLink to="/app/developers">Developers</NavLink>
              </li>
              <li>
                <button type="button" className="link-button" onClick={() => session.signOut()}>
                  Sign out
                </button>
              </li>
            </ul>
          ) : (
            <ul className="nav-list">
              <li>
                <Link to="/#pricing">Pricing</Link>
              </li>
              <li>
                <Link to="/app/sign-in" className="button button-small">
                  Sign in
                </Link>
              </li>
            </ul>
          )}
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1} aria-busy={navigation.state === 'loading'}>
        <Outlet />
      </main>
      <footer className="site-footer">
        {signedIn ? <p>Signed in as {signedIn.email}</p> : null}
        <p>
          <a href={`${settings.apiBaseUrl}/docs`}>API documentation</a> · <a href={`${settings.apiBaseUrl}/openapi.json`}>OpenAPI</a>
        </p>
      </footer>
    </>
  );
}
