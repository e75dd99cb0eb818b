import { useEffect, useId, useState, type FormEvent } from 'react';
import { useLocation } from 'react-router';
import { api, ApiProblem, call, type CreditPack, type WebApiKey } from '../api/client.ts';
import { leaveForCheckout } from '../api/checkout.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { formatDate, formatDateTime } from '../components/format.ts';
import { useLoad } from '../components/use-load.ts';
import { settings } from '../settings.ts';

const REASONS: Record<string, string> = { purchase: 'Credits bought', video_create: 'Video made', refund: 'Refund of a failed video', grant: 'Credits granted' };
const problemOf = (error: unknown, fallback: string) => (error instanceof ApiProblem ? error : new ApiProblem(fallback, 'Try again in a moment.', undefined, undefined));

/** For developers: API keys (made here, shown once), the API credit balance and ledger, credit packs, and where the API is described. */
export function Developers() {
  const location = useLocation();
  const awaitingCredits = Boolean((location.state as { awaitingCredits?: boolean } | null)?.awaitingCredits);
  return (
    <section className="page">
      <h1>Developers</h1>
      <p>
        Use petsing from your own code or an AI agent: the REST API under <code>{settings.apiBaseUrl}/v1</code> and the MCP server take an API key; each video
        costs one API credit.
      </p>
      <ApiKeys />
      <Credits awaitingCredits={awaitingCredits} />
      <section aria-labelledby="docs-heading">
        <h2 id="docs-heading">Documentation</h2>
        <ul>
          <li>
            <a href={`${settings.apiBaseUrl}/docs`}>API documentation</a>
          </li>
          <li>
            <a href={`${settings.apiBaseUrl}/openapi.json`}>OpenAPI document</a>
          </li>
        </ul>
        <h3>MCP</h3>
        <p>Add this to your MCP client&apos;s settings, with one of your keys:</p>
        {/* Focusable, so a keyboard can scroll it where it is wider than a phone. */}
        <pre className="code" tabIndex={0} aria-label="MCP settings">
          {JSON.stringify({ mcpServers: { petsing: { type: 'http', url: `${settings.apiBaseUrl}/mcp`, headers: { Authorization: 'Bearer psk_live_…' } } } }, null, 2)}
        </pre>
      </section>
    </section>
  );
}

function ApiKeys() {
  const ids = { name: useId(), scopes: useId(), newKey: useId() };
  const keys = useLoad((signal) => call(api.GET('/user/api-keys', { signal })), 'api-keys');
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'read-write'>('read');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const [created, setCreated] = useState<{ key: string; name: string }>();
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<string>();
  const [confirming, setConfirming] = useState<string>();

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    setCopied(false);
    try {
      const scopes: WebApiKey['scopes'] = scope === 'read' ? ['videos:read'] : ['videos:read', 'videos:write'];
      const answer = await call(api.POST('/user/api-keys', { body: { name, scopes } }));
      setCreated({ key: answer.key, name: answer.api_key.name });
      setName('');
      keys.reload();
    } catch (error) {
      setProblem(problemOf(error, 'The key could not be created.'));
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      (document.getElementById(ids.newKey) as HTMLInputElement | null)?.select();
    }
  };
  const revoke = async (key: WebApiKey) => {
    setRevoking(key.id);
    setProblem(undefined);
    try {
      await call(api.DELETE('/user/api-keys/{id}', { params: { path: { id: key.id } } }));
      setConfirming(undefined);
      keys.reload();
    } catch (error) {
      setProblem(problemOf(error, 'The key could not be revoked.'));
    } finally {
      setRevoking(undefined);
    }
  };

  return (
    <section aria-labelledby="keys-heading" className="stack">
      <h2 id="keys-heading">API keys</h2>
      {created ? (
        <div className="notice notice-warning stack" role="status" data-testid="new-key">
          <p>
            <strong>Your new key “{created.name}”.</strong> Copy it now: it is shown only this once.
          </p>
          <div className="field">
            <label htmlFor={ids.newKey}>API key</label>
            <input id={ids.newKey} type="text" readOnly value={created.key} onFocus={(event) => event.target.select()} className="code-input" />
          </div>
          <p className="actions">
            <button type="button" className="button" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" className="button button-secondary" onClick={() => setCreated(undefined)}>
              Done, hide it
            </button>
          </p>
        </div>
      ) : null}
      <form onSubmit={(event) => void create(event)} className="card stack">
        <div className="field">
          <label htmlFor={ids.name}>Key name</label>
          <input id={ids.name} type="text" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} placeholder="e.g. my laptop" />
        </div>
        <fieldset className="plain">
          <legend>Permissions</legend>
          <div className="shape-option">
            <input type="radio" id={`${ids.scopes}-read`} name="scopes" checked={scope === 'read'} onChange={() => setScope('read')} />
            <label htmlFor={`${ids.scopes}-read`}>Read-only (templates, videos, credits)</label>
          </div>
          <div className="shape-option">
            <input type="radio" id={`${ids.scopes}-write`} name="scopes" checked={scope === 'read-write'} onChange={() => setScope('read-write')} />
            <label htmlFor={`${ids.scopes}-write`}>Read and write (also make and delete videos, spending credits)</label>
          </div>
        </fieldset>
        <button type="submit" className="button" disabled={busy} aria-busy={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
      <ErrorNotice problem={problem} />
      <ErrorNotice problem={keys.problem} title="Your keys could not be loaded." />
      {keys.data && keys.data.keys.length === 0 ? <p className="muted">No keys yet.</p> : null}
      {keys.data && keys.data.keys.length > 0 ? (
        <ul className="key-list">
          {keys.data.keys.map((key) => (
            <li key={key.id} className="card key-item" data-testid="api-key">
              <p>
                <strong>{key.name || 'Unnamed key'}</strong> <code>{key.prefix}…</code>
              </p>
              <p className="muted small">
                {key.scopes.includes('videos:write') ? 'Read and write' : 'Read-only'} · made {formatDate(key.created_at)} ·{' '}
                {key.last_used_at ? `last used ${formatDateTime(key.last_used_at)}` : 'never used'}
              </p>
              {key.revoked_at ? (
                <p>
                  <span className="badge badge-failed">Revoked {formatDate(key.revoked_at)}</span>
                </p>
              ) : confirming === key.id ? (
                <div className="confirm" role="group" aria-label={`Confirm revoking ${key.name}`}>
                  <p>Revoke this key? Anything using it stops working at once.</p>
                  <button type="button" className="button button-danger" onClick={() => void revoke(key)} disabled={revoking === key.id} aria-busy={revoking === key.id}>
                    {revoking === key.id ? 'Revoking…' : 'Yes, revoke it'}
                  </button>
                  <button type="button" className="button button-secondary" onClick={() => setConfirming(undefined)}>
                    Keep it
                  </button>
                </div>
              ) : (
                <p>
                  <button type="button" className="button button-secondary button-small" onClick={() => setConfirming(key.id)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </button>
                </p>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function Credits({ awaitingCredits }: { awaitingCredits: boolean }) {
  const credits = useLoad((signal) => call(api.GET('/user/credits', { params: { query: { limit: 20 } }, signal })), 'credits');
  const packs = useLoad((signal) => call(api.GET('/credits/packs', { signal })), 'packs');
  const [waitingForStripe, setWaitingForStripe] = useState(awaitingCredits);
  // A purchase in the ledger since shortly before coming back ends the wait (the clock read once, not per render).
  const [recentSince] = useState(() => Date.now() - 10 * 60_000);
  const purchased = credits.data?.recent.some((entry) => entry.reason === 'purchase' && new Date(entry.created_at).getTime() > recentSince);
  const waiting = waitingForStripe && !purchased;
  const [buying, setBuying] = useState<string>();
  const [problem, setProblem] = useState<ApiProblem>();
  const { reload } = credits;

  // Back from buying credits: read the balance again until Stripe's confirmation added them (up to a minute).
  useEffect(() => {
    if (!waiting) return;
    let tries = 0;
    const timer = setInterval(() => {
      if (++tries > 30) setWaitingForStripe(false);
      else reload();
    }, 2000);
    return () => clearInterval(timer);
  }, [waiting, reload]);

  const buy = async (pack: CreditPack) => {
    setBuying(pack.pack);
    setProblem(undefined);
    try {
      const session = await call(api.POST('/credits/create-checkout-session', { body: { pack: pack.pack } }));
      if (session.url) leaveForCheckout(session.url, { purpose: 'credit_pack', pack: pack.pack });
    } catch (error) {
      setBuying(undefined);
      setProblem(problemOf(error, 'The purchase could not start.'));
    }
  };

  return (
    <section aria-labelledby="credits-heading" className="stack">
      <h2 id="credits-heading">API credits</h2>
      <ErrorNotice problem={credits.problem} title="Your credits could not be loaded." />
      {waiting ? (
        <p className="notice" role="status">
          Payment received. Your credits appear here as soon as Stripe confirms it…
        </p>
      ) : null}
      {credits.data ? (
        <p className="balance" data-testid="credit-balance">
          <strong>{credits.data.balance}</strong> {credits.data.balance === 1 ? 'credit' : 'credits'}{' '}
          <span className="muted">({credits.data.credits_per_video} per video; credits never expire)</span>
        </p>
      ) : null}
      {credits.data && credits.data.recent.length > 0 ? (
        <table className="ledger">
          <caption className="visually-hidden">Latest credit changes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {credits.data.recent.map((entry, index) => (
              <tr key={`${entry.created_at}-${index}`}>
                <td>{formatDateTime(entry.created_at)}</td>
                <td>{REASONS[entry.reason] ?? entry.reason}</td>
                <td className={entry.delta < 0 ? 'delta-negative' : 'delta-positive'}>{entry.delta > 0 ? `+${entry.delta}` : entry.delta}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : credits.data ? (
        <p className="muted">No credit changes yet.</p>
      ) : null}
      <ErrorNotice problem={packs.problem} title="Credit packs could not be loaded." />
      {/* Offered only where the service takes payments; without, credits come from the operator (petsing credits grant). */}
      {packs.data?.payments_available ? (
        <>
          <h3>Buy credits</h3>
          <ErrorNotice problem={problem} />
          <ul className="plan-grid">
            {packs.data.packs.map((pack) => (
              <li key={pack.pack} className="card plan stack">
                <p className="price">{pack.credits} credits</p>
                <p className="muted">{pack.formatted}</p>
                <button type="button" className="button button-secondary" onClick={() => void buy(pack)} disabled={buying !== undefined} aria-busy={buying === pack.pack}>
                  {buying === pack.pack ? 'Opening checkout…' : `Buy ${pack.credits} credits`}
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
