import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { api, ApiProblem, toProblem, type Schemas } from '../api/client.ts';
import { session, useSession } from '../auth/session.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { useLoad } from '../components/use-load.ts';

type Details = Schemas['AuthorizationRequestDetails'];
type RequestQuery = Omit<Schemas['AuthorizationDecisionRequest'], 'decision'>;

/**
 * A refused request comes with `redirect_to` once the service verified the client and its redirect URI: the
 * client learns of it there (RFC 6749 §4.1.2.1). Without it the page shows the problem and never redirects.
 */
class RefusedRequest extends ApiProblem {
  constructor(readonly redirectTo: string) {
    super('The request was refused.', undefined, undefined, 400);
  }
}

function failure(error: unknown, status: number): ApiProblem {
  const redirectTo = (error as { redirect_to?: unknown } | undefined)?.redirect_to;
  return typeof redirectTo === 'string' ? new RefusedRequest(redirectTo) : toProblem(error, status);
}

/**
 * The OAuth authorization page ({SITE_URL}/oauth/authorize): shows which application asks for what, signs the
 * person in first when needed (and comes back here with the same request), then sends their decision with
 * their ID token and follows the answer back to the application.
 */
export function Authorize() {
  const location = useLocation();
  const signedIn = useSession();
  // The query goes to the service as it came (a parameter sent twice must stay visible to it).
  const search = location.search.replace(/^\?/, '');
  const query = Object.fromEntries(new URLSearchParams(search)) as RequestQuery;
  const [deciding, setDeciding] = useState<'allow' | 'deny'>();
  const [problem, setProblem] = useState<ApiProblem>();
  const [leavingFor, setLeavingFor] = useState<string>();

  const request = useLoad(async (signal) => {
    const { data, error, response } = await api.GET('/oauth/authorization-request', { params: { query }, querySerializer: () => search, signal });
    if (!data) throw failure(error, response.status);
    return data;
  }, search);
  const redirectTo = leavingFor ?? (request.problem instanceof RefusedRequest ? request.problem.redirectTo : undefined);
  useEffect(() => {
    if (redirectTo) window.location.assign(redirectTo);
  }, [redirectTo]);

  const decide = async (decision: 'allow' | 'deny') => {
    setDeciding(decision);
    setProblem(undefined);
    try {
      const { data, error, response } = await api.POST('/oauth/authorization-decision', { body: { ...query, decision } });
      if (data) return setLeavingFor(data.redirect_to);
      const refused = failure(error, response.status);
      if (refused instanceof RefusedRequest) return setLeavingFor(refused.redirectTo);
      setProblem(refused);
    } catch {
      setProblem(new ApiProblem('The service could not be reached.', 'Check your connection and try again.', 'network_error', undefined));
    }
    setDeciding(undefined);
  };

  if (redirectTo) {
    return (
      <section className="page narrow">
        <h1>Returning to the application</h1>
        <p role="status">One moment…</p>
      </section>
    );
  }
  if (request.problem) {
    return (
      <section className="page narrow">
        <h1>This authorization request cannot continue</h1>
        <ErrorNotice problem={request.problem} />
        <p>Return to the application you came from and start signing in again.</p>
      </section>
    );
  }
  if (!request.data) {
    return (
      <section className="page narrow">
        <h1>Authorize an application</h1>
        <p role="status">Checking the request…</p>
      </section>
    );
  }

  const here = `${location.pathname}${location.search}`;
  return (
    <section className="page narrow">
      <h1>Authorize {request.data.client_name}</h1>
      <RequestSummary details={request.data} />
      {signedIn ? (
        <>
          <p>
            Signed in as <strong>{signedIn.email}</strong>.{' '}
            <Link to={`/app/sign-in?next=${encodeURIComponent(here)}`} onClick={() => session.discard()}>
              Use another account
            </Link>
          </p>
          <ErrorNotice problem={problem} />
          <div className="actions">
            <button type="button" className="button" onClick={() => void decide('allow')} disabled={deciding !== undefined} aria-busy={deciding === 'allow'}>
              {deciding === 'allow' ? 'Allowing…' : 'Allow'}
            </button>
            <button
              type="button"
              className="button button-secondary"
              onClick={() => void decide('deny')}
              disabled={deciding !== undefined}
              aria-busy={deciding === 'deny'}
            >
              {deciding === 'deny' ? 'Denying…' : 'Deny'}
            </button>
          </div>
        </>
      ) : (
        <>
          <p>Sign in to your petsing account to decide. You will come back to this page afterwards.</p>
          <Link className="button" to={`/app/sign-in?next=${encodeURIComponent(here)}`}>
            Sign in to continue
          </Link>
        </>
      )}
    </section>
  );
}

function RequestSummary({ details }: { details: Details }) {
  return (
    <>
      <p>
        <strong>{details.client_name}</strong> wants to use the {details.resource_name} with your account. It will be able to:
      </p>
      <ul>
        {details.scopes.map(({ scope, description }) => (
          <li key={scope}>
            {description} <span className="muted small">({scope})</span>
          </li>
        ))}
      </ul>
      <p className="muted">
        After you decide you will be sent back to <strong>{details.redirect_origin}</strong>
        {details.redirect_is_local ? ', an application on this computer' : ''}. The name above is the one the application gave itself: allow only
        applications you trust.
      </p>
    </>
  );
}
