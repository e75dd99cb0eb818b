/**
 * Runtime settings: the API serves index.html with them in <meta name="petsing-config"> (see
 * control-plane/src/http/site.ts). Served some other way (a CDN, `vite dev`), the page has `{}` there and
 * the app talks to VITE_API_BASE_URL, or to its own origin.
 */
/** `none`: no identity provider, and the API serves its development sign-in on a loopback address only. */
type SignInSettings = { kind: 'development' } | { kind: 'oidc'; authority: string; clientId: string } | { kind: 'none' };
export type Settings = { apiBaseUrl: string; wsUrl: string; signIn: SignInSettings };

type Served = {
  api_base_url?: string;
  ws_url?: string;
  sign_in?: { kind: 'development' } | { kind: 'oidc'; authority: string; client_id: string } | { kind: 'none' };
};

function readServed(): Served {
  const content = document.querySelector('meta[name="petsing-config"]')?.getAttribute('content');
  try {
    return content ? (JSON.parse(content) as Served) : {};
  } catch {
    return {};
  }
}

function load(): Settings {
  const served = readServed();
  const fallbackBase = (import.meta.env.VITE_API_BASE_URL as string | undefined) ?? (import.meta.env.DEV ? 'http://localhost:8080' : window.location.origin);
  const apiBaseUrl = (served.api_base_url ?? fallbackBase).replace(/\/+$/, '');
  const wsUrl = served.ws_url ?? `${apiBaseUrl.replace(/^http/, 'ws')}/ws`;
  const signIn: SignInSettings =
    served.sign_in?.kind === 'oidc'
      ? { kind: 'oidc', authority: served.sign_in.authority, clientId: served.sign_in.client_id }
      : served.sign_in?.kind === 'none'
        ? { kind: 'none' }
        : { kind: 'development' };
  return { apiBaseUrl, wsUrl, signIn };
}

export const settings = load();
