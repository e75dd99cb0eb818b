import { useEffect } from 'react';
import { Link, useLocation } from 'react-router';
import { api, call } from '../api/client.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { INTERVAL_WORDS, PLAN_NAMES } from '../components/format.ts';
import { TemplatePreview } from '../components/TemplatePreview.tsx';
import { useLoad } from '../components/use-load.ts';

/** The signed-out start page: what the product does, the songs playing, and the prices in the visitor's currency. */
export function Landing() {
  const templates = useLoad((signal) => call(api.GET('/templates', { signal })), 'templates');
  const pricing = useLoad((signal) => call(api.GET('/subscription/pricing', { signal })), 'pricing');
  // The paid plans and the watermark's removal are shown only where the service takes payments; the free plan always.
  const offered = pricing.data?.payments_available ? pricing.data : undefined;
  const location = useLocation();
  // A link to /#pricing (the create page's "see the plans") lands on the prices once they are there.
  useEffect(() => {
    if (location.hash === '#pricing' && pricing.data) document.getElementById('pricing')?.scrollIntoView();
  }, [location.hash, pricing.data]);

  return (
    <div className="landing">
      <section className="hero">
        <h1>Make your pet sing</h1>
        <p className="lead">
          Take a photo of your dog, cat, bird, rabbit, hamster or guinea pig, pick a song, and petsing animates its mouth to the music. Your singing
          video is ready in about a minute.
        </p>
        <ol className="steps">
          <li>
            <strong>Snap</strong> a photo where your pet&apos;s face is clear.
          </li>
          <li>
            <strong>Pick</strong> a song and the shape of the video.
          </li>
          <li>
            <strong>Watch</strong> it render live, then download or share it.
          </li>
        </ol>
        <p>
          <Link to="/app/new" className="button">
            Make a video, free
          </Link>
        </p>
      </section>

      <section aria-labelledby="songs-heading">
        <h2 id="songs-heading">Songs</h2>
        <ErrorNotice problem={templates.problem} title="The songs could not be loaded." />
        {templates.loading && !templates.data ? <p aria-live="polite">Loading songs…</p> : null}
        <ul className="template-grid">
          {templates.data?.map((template) => (
            <li key={template.id} className="card">
              <TemplatePreview template={template} />
              <h3>{template.name}</h3>
              <p className="muted">
                {template.description} · {Math.round(template.duration_seconds)} s
              </p>
            </li>
          ))}
        </ul>
      </section>

      <section aria-labelledby="pricing-heading" id="pricing" aria-busy={pricing.loading}>
        <h2 id="pricing-heading">Pricing</h2>
        <ErrorNotice problem={pricing.problem} title="Prices could not be loaded." />
        <ul className="plan-grid">
          <li className="card plan">
            <h3>Free</h3>
            <p className="price">2 videos every month</p>
            <p className="muted">With a small watermark. No card needed.</p>
          </li>
          {offered?.plans.map((plan) => (
            <li key={plan.plan_type} className="card plan">
              <h3>{PLAN_NAMES[plan.plan_type] ?? plan.plan_type}</h3>
              <p className="price">
                {plan.formatted} <span className="muted">{INTERVAL_WORDS[plan.interval] ?? plan.interval}</span>
              </p>
              <p className="muted">Unlimited videos, no watermark.</p>
            </li>
          ))}
        </ul>
        {offered ? (
          <p className="muted">
            Prices in {offered.currency}. Removing the watermark from one video: {offered.watermark_removal.formatted}.
          </p>
        ) : null}
      </section>
    </div>
  );
}
