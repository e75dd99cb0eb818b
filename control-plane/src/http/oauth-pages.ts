import type { Scope } from '../db/schema.ts';
import { SCOPE_DESCRIPTIONS, type AuthorizationRequest } from '../services/oauth.service.ts';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/**
 * Headers for both pages: never cached (they carry one-time form tokens), never framed (a framed
 * consent button could be clickjacked), and no scripts or outside resources at all.
 */
export const AUTHORIZATION_PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
};

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}input[type=email]{width:100%;padding:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1.2rem}.error{color:#a00}.note{color:#555;font-size:.9rem}</style>
</head><body>${body}</body></html>`;
}

const hidden = (name: string, value: string | undefined) =>
  value === undefined ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/** Sign-in (development identity provider: an email address) and consent on one page. */
export function renderConsentPage(input: { request: AuthorizationRequest; csrfToken: string; email?: string; error?: string }): string {
  const { request } = input;
  const scopes = request.scopes
    .map((scope: Scope) => `<li><code>${scope}</code>: ${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</li>`)
    .join('');
  const fields = [
    hidden('response_type', 'code'),
    hidden('client_id', request.client.id),
    hidden('redirect_uri', request.redirectUri),
    hidden('scope', request.scopes.join(' ')),
    hidden('state', request.state),
    hidden('code_challenge', request.codeChallenge),
    hidden('code_challenge_method', 'S256'),
    hidden('resource', request.resource),
    hidden('csrf_token', input.csrfToken),
  ].join('');
  return page(
    'Authorize access to petsing',
    `<h1>Authorize ${escapeHtml(request.client.client_name)}</h1>
<p><strong>${escapeHtml(request.client.client_name)}</strong> wants to access your petsing account with these permissions:</p>
<ul>${scopes}</ul>
<p class="note">After you decide, you will be sent back to <code>${escapeHtml(new URL(request.redirectUri).origin)}</code>.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post">${fields}
<label for="email">Sign in with your email address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(input.email ?? '')}">
<p class="note">Development sign-in: no password is asked.</p>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>`,
  );
}

export function renderAuthorizationErrorPage(message: string): string {
  return page(
    'Authorization failed',
    `<h1>This authorization request cannot continue</h1>
<p class="error">${escapeHtml(message)}</p>
<p>Return to the application you came from and start signing in again.</p>`,
  );
}
