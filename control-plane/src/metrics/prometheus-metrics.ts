import { counter, gauge, histogram, renderStageDuration, type MetricsRegistry } from '@petsing/platform/metrics';
import type { Metrics } from '../services/ports/metrics.ts';

/** Failure codes are the service's own (snake_case, a bounded set); anything else would be a label from outside. */
const FAILURE_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** The render queue, the one whose backlog the control worker samples. */
const RENDER_QUEUE = 'render';

/**
 * The metric catalogue (docs/metrics.md) in a prom-client registry. One per process: the embedded service's
 * API, control worker and render worker share it (and its port). Series exist from the first count on.
 */
export function prometheusMetrics(registry: MetricsRegistry): Metrics {
  const http = histogram(registry, {
    name: 'http_request_duration_seconds',
    help: 'API requests by method, Express route template ("unmatched" when no route matched) and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  });
  const created = counter(registry, { name: 'petsing_videos_created_total', help: 'Videos created (stored and paid for), by the surface that asked.', labelNames: ['surface'] });
  const completed = counter(registry, { name: 'petsing_videos_completed_total', help: 'Videos that completed (the first completion of each; re-renders are not counted).' });
  const failed = counter(registry, { name: 'petsing_videos_failed_total', help: 'Videos whose status changed to failed, by failure code (canceled included).', labelNames: ['code'] });
  const refunds = counter(registry, { name: 'petsing_refunds_total', help: 'Failed or canceled videos whose payment was given back (once per video), by what paid for it.', labelNames: ['payment'] });
  const spent = counter(registry, { name: 'petsing_credits_spent_total', help: 'Credits spent on video creates, by kind.', labelNames: ['kind'] });
  const granted = counter(registry, { name: 'petsing_credits_granted_total', help: 'Credits added: bought (purchase), granted by an operator (grant) or given back for a failed video (refund).', labelNames: ['reason'] });
  const refused = counter(registry, { name: 'petsing_rate_limit_refusals_total', help: 'Requests refused by a rate limit (429), by policy.', labelNames: ['policy'] });
  const webhooks = counter(registry, { name: 'petsing_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome.', labelNames: ['outcome'] });
  const pollCache = counter(registry, { name: 'petsing_video_poll_cache_requests_total', help: "Video reads on the poll path, answered from this process's cache (hit) or the database (miss).", labelNames: ['result'] });
  const backlog = gauge(registry, { name: 'petsing_render_backlog', help: 'Renders waiting for a render node (the render task queue\'s backlog), sampled every 15 s.', labelNames: ['queue'] });
  const backlogAge = gauge(registry, { name: 'petsing_render_backlog_oldest_age_seconds', help: 'How long the oldest render waiting for a render node has waited, sampled every 15 s.', labelNames: ['queue'] });
  const queueWait = histogram(registry, {
    name: 'petsing_render_queue_wait_seconds',
    help: 'How long a render waited for a render node: from its queued stage to the render node taking it.',
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
  });
  const stages = renderStageDuration(registry);
  return {
    videoCreated: (surface) => created.inc({ surface }),
    videoCompleted: () => completed.inc(),
    videoFailed: (code) => failed.inc({ code: FAILURE_CODE.test(code) ? code : 'other' }),
    refunded: (payment) => refunds.inc({ payment }),
    creditsSpent: (kind, credits) => spent.inc({ kind }, credits),
    creditsGranted: (reason, credits) => granted.inc({ reason }, credits),
    rateLimited: (policy) => refused.inc({ policy }),
    webhookDelivered: (outcome) => webhooks.inc({ outcome }),
    pollCache: (result) => pollCache.inc({ result }),
    audioPrepared: (seconds) => stages.observe({ stage: 'audio_preparation', device: 'cpu' }, seconds),
    httpRequest: (method, route, statusCode, seconds) => http.observe({ method, route, status_code: String(statusCode) }, seconds),
    renderQueueWait: (seconds) => queueWait.observe(seconds),
    renderBacklog: (waiting, oldestAgeSeconds) => {
      backlog.set({ queue: RENDER_QUEUE }, waiting);
      backlogAge.set({ queue: RENDER_QUEUE }, oldestAgeSeconds);
    },
  };
}
