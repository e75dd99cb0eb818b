import { useState } from 'react';
import { Link } from 'react-router';
import { api, ApiProblem, call, type PlanPrice } from '../api/client.ts';
import { leaveForCheckout } from '../api/checkout.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { formatDate, INTERVAL_WORDS, PLAN_NAMES } from '../components/format.ts';
import { useLoad } from '../components/use-load.ts';

const STATUS_WORDS: Record<string, string> = {
  active: 'active',
  trialing: 'in its trial',
  past_due: 'waiting for a payment that failed',
  unpaid: 'unpaid',
  incomplete: 'waiting for the first payment',
  canceled: 'cancelled',
};

/** Plan and billing: the subscription, the plans in the visitor's currency, Checkout and Stripe's customer portal. */
export function Account() {
  const status = useLoad((signal) => call(api.GET('/subscription/status', { signal })), 'subscription');
  const pricing = useLoad((signal) => call(api.GET('/subscription/pricing', { signal })), 'pricing');
  const me = useLoad((signal) => call(api.GET('/user/me', { signal })), 'me');
  const [busy, setBusy] = useState<string>();
  const [problem, setProblem] = useState<ApiProblem>();

  const act = async (what: string, go: () => Promise<void>) => {
    setBusy(what);
    setProblem(undefined);
    try {
      await go();
    } catch (error) {
      setBusy(undefined);
      setProblem(error instanceof ApiProblem ? error : new ApiProblem('That did not work.', 'Try again in a moment.', undefined, undefined));
    }
  };
  const choose = (plan: PlanPrice) =>
    act(plan.plan_type, async () => {
      const session = await call(api.POST('/subscription/create-checkout-session', { body: { plan_type: plan.plan_type } }));
      if (session.url) leaveForCheckout(session.url, { purpose: 'plan', plan: plan.plan_type });
    });
  const portal = () =>
    act('portal', async () => {
      const answer = await call(api.POST('/subscription/create-portal-session'));
      window.location.assign(answer.url);
    });

  // Plans and billing are offered only where the service takes payments; without, the page says what the account has.
  const offered = pricing.data?.payments_available ? pricing.data : undefined;
  const current = status.data;
  const subscription = current?.subscription;
  return (
    <section className="page">
      <h1>Plan and billing</h1>
      <ErrorNotice problem={status.problem} title="Your plan could not be loaded." />
      {status.loading && !current ? <p role="status">Loading…</p> : null}
      {current && subscription ? (
        <div className="card stack" data-testid="current-plan">
          {current.subscribed ? (
            <p>
              <strong>{PLAN_NAMES[subscription.plan ?? ''] ?? 'Your'} plan</strong> is {STATUS_WORDS[subscription.status] ?? subscription.status}: unlimited videos, no
              watermark.
            </p>
          ) : subscription.status !== 'none' && subscription.status !== 'canceled' ? (
            <p>
              Your {PLAN_NAMES[subscription.plan ?? ''] ?? ''} plan is {STATUS_WORDS[subscription.status] ?? subscription.status}. Update your payment details in billing to keep it.
            </p>
          ) : (
            <p>
              <strong>Free.</strong>{' '}
              {me.data ? `${me.data.free_credits} of 2 free videos left this month (with a watermark); back to 2 on ${formatDate(me.data.free_credits_reset_at)}.` : '2 free videos every month, with a watermark.'}
            </p>
          )}
          {subscription.current_period_end && current.subscribed ? (
            <p className="muted">
              {subscription.cancel_at_period_end ? 'Ends' : 'Renews'} on {formatDate(subscription.current_period_end)}.
            </p>
          ) : null}
          {subscription.status !== 'none' && offered ? (
            <p>
              <button type="button" className="button button-secondary" onClick={() => void portal()} disabled={busy !== undefined} aria-busy={busy === 'portal'}>
                {busy === 'portal' ? 'Opening billing…' : 'Manage billing and receipts'}
              </button>
            </p>
          ) : null}
        </div>
      ) : null}
      <ErrorNotice problem={problem} />
      <ErrorNotice problem={pricing.problem} title="Prices could not be loaded." />

      {current && !current.subscribed && offered ? (
        <section aria-labelledby="plans-heading">
          <h2 id="plans-heading">Plans</h2>
          <ul className="plan-grid">
            {offered.plans.map((plan) => (
              <li key={plan.plan_type} className="card plan stack">
                <h3>{PLAN_NAMES[plan.plan_type] ?? plan.plan_type}</h3>
                <p className="price">
                  {plan.formatted} <span className="muted">{INTERVAL_WORDS[plan.interval] ?? plan.interval}</span>
                </p>
                <p className="muted">Unlimited videos, no watermark. Cancel any time.</p>
                <button type="button" className="button" onClick={() => void choose(plan)} disabled={busy !== undefined} aria-busy={busy === plan.plan_type}>
                  {busy === plan.plan_type ? 'Opening checkout…' : `Choose ${PLAN_NAMES[plan.plan_type] ?? plan.plan_type}`}
                </button>
              </li>
            ))}
          </ul>
          <p className="muted">Prices in {offered.currency}. Payments are handled by Stripe.</p>
        </section>
      ) : null}
      <p>
        <Link to="/app">Back to my videos</Link>
      </p>
    </section>
  );
}
