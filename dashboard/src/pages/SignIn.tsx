import { useId, useState, type FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { api, ApiProblem, call } from '../api/client.ts';
import { startOidcSignIn } from '../auth/oidc.ts';
import { safeReturnPath } from '../auth/return-path.ts';
import { session, useSession } from '../auth/session.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { settings } from '../settings.ts';


export function SignIn() {
  const signedIn = useSession();
  const [params] = useSearchParams();
  const next = safeReturnPath(params.get('next'), '/app/new');
  const [ended] = useState(() => session.takeEndReason());
  if (signedIn) return <Navigate to={next} replace />;
  return (
    <section className="page narrow">
      <h1>Sign in</h1>
      {ended ? (
        <p className="notice" role="status">
          {ended}
        </p>
      ) : null}
      {settings.signIn.kind === 'oidc' ? (
        <ProviderSignIn next={next} />
      ) : settings.signIn.kind === 'none' ? (
        <p className="notice notice-warning" role="status">
          Sign-in is not available here: this service has no identity provider, and its development sign-in only answers on the machine it runs on.
          Ask whoever runs it to set one up.
        </p>
      ) : (
        <DevelopmentSignIn next={next} />
      )}
    </section>
  );
}

function ProviderSignIn({ next }: { next: string }) {
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const start = async () => {
    setBusy(true);
    try {
      await startOidcSignIn(next);
    } catch (error) {
      setBusy(false);
      setProblem(new ApiProblem(error instanceof Error ? error.message : 'Sign-in could not start.', 'Try again in a moment.', undefined, undefined));
    }
  };
  return (
    <>
      <p>Sign in with your account. You will come back here afterwards.</p>
      <ErrorNotice problem={problem} />
      <button type="button" className="button" onClick={() => void start()} disabled={busy} aria-busy={busy}>
        {busy ? 'Opening sign-in…' : 'Continue to sign-in'}
      </button>
    </>
  );
}

/** The built-in development identity provider: an email address, no password (POST /dev-identity/token). */
function DevelopmentSignIn({ next }: { next: string }) {
  const navigate = useNavigate();
  const emailId = useId();
  const noteId = useId();
  const [email, setEmail] = useState('');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    try {
      const result = await call(api.POST('/dev-identity/token', { body: { email } }));
      session.signIn({ idToken: result.id_token, email: result.email, expiresAt: Date.now() + result.expires_in * 1000, via: 'development' });
      // The account is made on the first signed-in call; this one also checks that the token works.
      await call(api.GET('/user/me'));
      void navigate(next, { replace: true });
    } catch (error) {
      session.discard();
      setBusy(false);
      setProblem(error instanceof ApiProblem ? error : new ApiProblem('Signing in failed.', 'Try again.', undefined, undefined));
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} className="stack">
      <p className="notice notice-warning" id={noteId}>
        <strong>Development sign-in.</strong> This service runs without an identity provider, so anyone can sign in as any email address and no password
        is asked. Use it for trying petsing out on your own machine only.
      </p>
      <div className="field">
        <label htmlFor={emailId}>Email address</label>
        <input
          id={emailId}
          type="email"
          name="email"
          autoComplete="email"
          inputMode="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          aria-describedby={noteId}
        />
      </div>
      <ErrorNotice problem={problem} />
      <button type="submit" className="button" disabled={busy} aria-busy={busy}>
        {busy ? 'Signing in…' : 'Sign in (development)'}
      </button>
    </form>
  );
}
