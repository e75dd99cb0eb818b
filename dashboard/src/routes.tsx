import { createBrowserRouter, Navigate, Outlet, useLocation } from 'react-router';
import { session, useSession } from './auth/session.ts';
import { Shell } from './components/Shell.tsx';
import { Landing } from './pages/Landing.tsx';
import { NotFound } from './pages/NotFound.tsx';

/**
 * The app's pages. Everything but `/` lives below /app, a prefix no API path uses, except Stripe's return
 * addresses (/account, /checkout/success, /checkout/cancel), the OAuth authorization page (/oauth/authorize)
 * and the unsubscribe link (/email/unsubscribe); the API answers index.html for all of them
 * (control-plane/src/http/site.ts). Pages after the landing load on demand, so the first page carries only
 * what it needs.
 */
function RequireSession() {
  const signedIn = useSession();
  const location = useLocation();
  if (!signedIn) {
    // Signing out leads to the start page; an expired or missing sign-in to the sign-in page, then back here.
    if (session.wasSignedOutByUser()) return <Navigate to="/" replace />;
    return <Navigate to={`/app/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  }
  return <Outlet />;
}

export const router = createBrowserRouter([
  {
    path: '/',
    element: <Shell />,
    // Shown while the first page's lazy route loads (the router warns without one).
    HydrateFallback: () => <p role="status">Loading…</p>,
    children: [
      { index: true, element: <Landing /> },
      { path: 'app/sign-in', lazy: async () => ({ Component: (await import('./pages/SignIn.tsx')).SignIn }) },
      { path: 'app/callback', lazy: async () => ({ Component: (await import('./pages/Callback.tsx')).Callback }) },
      // The OAuth authorization page (the API serves the app there too): open to everyone, it asks to sign in itself.
      { path: 'oauth/authorize', lazy: async () => ({ Component: (await import('./pages/Authorize.tsx')).Authorize }) },
      // The unsubscribe link of lifecycle emails, as browsers get it (API clients get its JSON).
      { path: 'email/unsubscribe', lazy: async () => ({ Component: (await import('./pages/Unsubscribe.tsx')).Unsubscribe }) },
      {
        element: <RequireSession />,
        children: [
          {
            path: 'app',
            children: [
              { index: true, lazy: async () => ({ Component: (await import('./pages/Library.tsx')).Library }) },
              { path: 'new', lazy: async () => ({ Component: (await import('./pages/Create.tsx')).Create }) },
              { path: 'videos/:id', lazy: async () => ({ Component: (await import('./pages/VideoPage.tsx')).VideoPage }) },
              { path: 'developers', lazy: async () => ({ Component: (await import('./pages/Developers.tsx')).Developers }) },
            ],
          },
          // Stripe's return addresses, as the service sends them (docs/web-app.md); the API serves the app there too.
          { path: 'account', lazy: async () => ({ Component: (await import('./pages/Account.tsx')).Account }) },
          { path: 'checkout/success', lazy: async () => ({ Component: (await import('./pages/CheckoutReturn.tsx')).CheckoutSuccess }) },
          { path: 'checkout/cancel', lazy: async () => ({ Component: (await import('./pages/CheckoutReturn.tsx')).CheckoutCancel }) },
        ],
      },
      { path: '*', element: <NotFound /> },
    ],
  },
]);
