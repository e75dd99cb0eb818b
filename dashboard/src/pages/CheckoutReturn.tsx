import { useEffect, useState } from 'react';
import { Link, Navigate } from 'react-router';
import { api, call, type SubscriptionStatus } from '../api/client.ts';
import { takeCheckoutPurpose, type CheckoutPurpose } from '../api/checkout.ts';
import { PLAN_NAMES } from '../components/format.ts';

const CONFIRM_POLL_MS = 2000;
const CONFIRM_TRIES = 30;

/** Where Stripe sends the browser after paying: a watermark removal goes on to its video, a plan waits for confirmation. */
export function CheckoutSuccess() {
  const [purpose] = useState<CheckoutPurpose | undefined>(() => takeCheckoutPurpose());
  const [status, setStatus] = useState<SubscriptionStatus>();
  const [gaveUp, setGaveUp] = useState(false);

  useEffect(() => {
    if (purpose && purpose.purpose !== 'plan') return;
    const abort = new AbortController();
    let tries = 0;
    const check = async () => {
      const answer = await call(api.GET('/subscription/status', { signal: abort.signal })).catch(() => undefined);
      if (abort.signal.aborted) return;
      if (answer) setStatus(answer);
      if (answer?.subscribed) return;
      if (++tries >= CONFIRM_TRIES) setGaveUp(true);
      else setTimeout(() => void check(), CONFIRM_POLL_MS);
    };
    void check();
    return () => abort.abort();
  }, [purpose]);

  if (purpose?.purpose === 'watermark_removal') {
    return <Navigate to={`/app/videos/${purpose.videoId}`} replace state={{ awaitingRemoval: true }} />;
  }
  if (purpose?.purpose === 'credit_pack') return <Navigate to="/app/developers" replace state={{ awaitingCredits: true }} />;
  return (
    <section className="page narrow">
      <h1>Thank you</h1>
      {status?.subscribed ? (
        <p role="status">
          Your {PLAN_NAMES[status.subscription.plan ?? ''] ?? ''} plan is active: make as many videos as you like, without a watermark.
        </p>
      ) : gaveUp ? (
        <p role="status">Stripe has not confirmed the payment yet. Your plan starts as soon as it does; check this again in a few minutes.</p>
      ) : (
        <p role="status">Payment received. Waiting for Stripe to confirm it…</p>
      )}
      <p>
        <Link to="/app/new" className="button">
          Make a video
        </Link>
      </p>
      <p>
        <Link to="/account">Plan and billing</Link>
      </p>
    </section>
  );
}

export function CheckoutCancel() {
  const [purpose] = useState<CheckoutPurpose | undefined>(() => takeCheckoutPurpose());
  return (
    <section className="page narrow">
      <h1>Payment cancelled</h1>
      <p>Nothing was charged.</p>
      <p>
        {purpose?.purpose === 'watermark_removal' ? (
          <Link to={`/app/videos/${purpose.videoId}`}>Back to the video</Link>
        ) : purpose?.purpose === 'credit_pack' ? (
          <Link to="/app/developers">Back to the developer page</Link>
        ) : (
          <Link to="/account">Back to the plans</Link>
        )}
      </p>
    </section>
  );
}
