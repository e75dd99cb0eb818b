import type { ControlPlaneConfig } from '../config/env.ts';
import { errorCatalog, retryableByCode, type ErrorCode } from '../errors/app-error.ts';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}dt{font-weight:600;margin-top:1rem}</style>
</head><body>${body}</body></html>`;
}

/** The served documentation that error documentation_url values and the versioning policy link to. */
export function renderDocsPage(config: ControlPlaneConfig): string {
  const base = escapeHtml(config.baseUrl);
  return page(
    'petsing documentation',
    `<h1>petsing</h1>
<p>Turns a photo of a pet plus audio into a lip-synced singing video.</p>
<ul>
<li>OpenAPI 3.1 document: <a href="${base}/openapi.json">${base}/openapi.json</a></li>
<li>Public API base: <code>${base}/v1</code> (API key or OAuth 2.1 access token)</li>
<li>Web-app endpoints (<code>/user/me</code>, <code>/create-with-template</code>, <code>/tts</code>, <code>/subscription/…</code> and more): an identity-provider ID token; see the <code>web-app</code> tag of the OpenAPI document</li>
<li>Websocket for status events: <code>${escapeHtml(config.wsUrl)}</code></li>
<li>Error codes: <a href="${base}/docs/errors">${base}/docs/errors</a></li>
</ul>
<h2 id="versioning">Versioning</h2>
<p>The major version is the first path segment (<code>/v1</code>). Adding endpoints, optional request fields, response fields and values of extensible enums ships without notice.
Breaking changes ship as a new major version; the old version keeps answering for at least 180 days after its deprecation is announced with
<code>Deprecation</code>, <code>Sunset</code> and <code>Link rel="deprecation"</code> headers. <a href="${base}/versions">${base}/versions</a> lists every version.</p>
<h2 id="migrating-from-v1">Migrating from v1</h2><p>v1 is the current version; there is nothing to migrate yet.</p>
<h2 id="rate-limits">Rate limits</h2><p>${config.env.RATE_LIMIT_READS_PER_MINUTE} reads and ${config.env.RATE_LIMIT_WRITES_PER_MINUTE} writes per 60 seconds per account on /v1,
and ${config.env.RATE_LIMIT_WEB_MEDIA_PER_MINUTE} per 60 seconds per account for the web app's creates, speech and soundtrack extraction;
${config.env.RATE_LIMIT_SIGN_INS_PER_MINUTE} per 60 seconds per client address for <code>POST /oauth/token</code>, <code>/oauth/register</code> and
<code>/dev-identity/token</code> together. Each is announced in <code>RateLimit</code> and <code>RateLimit-Policy</code> headers; a 429 carries
<code>Retry-After</code>.</p>`,
  );
}

export function renderErrorDocsPage(): string {
  const entries = Object.entries(errorCatalog)
    .map(
      ([code, entry]) =>
        `<dt id="${code}"><code>${code}</code> (HTTP ${entry.status}, ${retryableByCode[code as ErrorCode] ? 'retrying helps' : 'retrying does not help'})</dt>`
        + `<dd>${escapeHtml(entry.title)}. ${escapeHtml(entry.hint)}</dd>`,
    )
    .join('\n');
  return page(
    'petsing error codes',
    `<h1>Error codes</h1>
<p>Every failure is JSON: <code>{"error": {"code", "message", "status", "hint", "documentation_url", "retryable"}, "message"}</code>. Codes are stable; messages may change.</p>
<p><code>retryable</code> says whether sending the same request again, unchanged, can succeed; it is fixed per code (below). Wait
<code>retry_after_seconds</code> first when the error has it (429, and 503 where the service knows how long; the same value as the
<code>Retry-After</code> header). Where retrying does not help, change the request (or the account: buy credits, use another key) first.
<code>insufficient_credits</code> adds <code>credit_balance</code> (the balance now) and <code>credits_required</code> (what the create costs);
<code>face_not_found</code> adds <code>image_id</code> (the checked photo, kept 24 hours: create again with it and <code>face.mouth</code>).</p>
<dl>${entries}</dl>`,
  );
}
