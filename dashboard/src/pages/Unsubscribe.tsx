import { Link, useSearchParams } from 'react-router';
import { api, call } from '../api/client.ts';
import { useSession } from '../auth/session.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { useLoad } from '../components/use-load.ts';

/**
 * The unsubscribe link of a lifecycle email, opened in a browser (the API serves the app there to browsers):
 * opts the link's holder out with POST /email/unsubscribe, as following the link does for any other client,
 * and says which address is opted out.
 */
export function Unsubscribe() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const signedIn = useSession();
  const result = useLoad((signal) => call(api.POST('/email/unsubscribe', { body: { token }, signal })), token);

  return (
    <section className="page narrow">
      <h1>Email preferences</h1>
      {result.data ? (
        <div role="status">
          <p>
            <strong>{result.data.email}</strong> is unsubscribed.
          </p>
          <p>{result.data.message}</p>
        </div>
      ) : result.problem ? (
        <ErrorNotice problem={result.problem} title="This unsubscribe link did not work." />
      ) : (
        <p role="status">Unsubscribing…</p>
      )}
      <p>
        Your account and your videos are not affected.{' '}
        {signedIn ? <Link to="/account">Go to your account</Link> : <Link to="/app/sign-in?next=%2Fapp">Sign in to your account</Link>}
      </p>
    </section>
  );
}
