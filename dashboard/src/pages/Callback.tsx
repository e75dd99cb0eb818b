import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { completeOidcSignIn } from '../auth/oidc.ts';

/** One exchange per page load (a code is single-use; development mode runs effects twice). */
let completing: Promise<string> | undefined;

/** Where the identity provider sends the browser back with the authorization code (PKCE exchange). */
export function Callback() {
  const navigate = useNavigate();
  const [failure, setFailure] = useState<string>();
  useEffect(() => {
    completing ??= completeOidcSignIn();
    completing.then(
      (next) => void navigate(next, { replace: true }),
      (error: unknown) => setFailure(error instanceof Error ? error.message : 'Signing in failed.'),
    );
  }, [navigate]);
  return (
    <section className="page narrow">
      <h1>Signing you in</h1>
      {failure ? (
        <div className="notice notice-error" role="alert">
          <p>{failure}</p>
          <p className="notice-hint">
            <Link to="/app/sign-in">Start signing in again</Link>.
          </p>
        </div>
      ) : (
        <p role="status">One moment…</p>
      )}
    </section>
  );
}
