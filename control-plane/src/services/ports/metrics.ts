/** Which surface asked for a video: the web app, /v1 or the MCP server (/v1 and MCP both make `api` videos). */
export type VideoSurface = 'web' | 'api' | 'mcp';

/** What paid for a video, and so what a refund gives back (nothing, for a subscription). */
type VideoPaymentKind = 'api_credit' | 'free_credit' | 'subscription';

/**
 * What the service counts (docs/metrics.md, the metric catalogue), each at the one place it happens; the
 * adapter (metrics/prometheus-metrics.ts) turns the calls into Prometheus series. Label values are bounded
 * sets, never ids.
 */
export interface Metrics {
  /** A video was stored and paid for (VideoService.create). */
  videoCreated(surface: VideoSurface): void;
  /** A video completed for the first time (VideoTransitions; a paid re-render completing again is not counted). */
  videoCompleted(): void;
  /** A video's status changed to failed, with its failure code (VideoTransitions; cancels are `canceled`). */
  videoFailed(code: string): void;
  /** A failed or canceled video's payment was given back, exactly once per video. */
  refunded(payment: VideoPaymentKind): void;
  creditsSpent(kind: 'api_credit' | 'free_credit', credits: number): void;
  creditsGranted(reason: 'purchase' | 'grant' | 'refund', credits: number): void;
  rateLimited(policy: 'read' | 'write' | 'media' | 'sign_in'): void;
  /** One webhook attempt's outcome (WebhookService.attempt). */
  webhookDelivered(outcome: 'delivered' | 'failed' | 'abandoned'): void;
  /** A video read on the poll path, answered from this process's cache (`hit`) or the database (`miss`). */
  pollCache(result: 'hit' | 'miss'): void;
  /** The control worker's audio preparation of a render (ffmpeg, on the CPU). */
  audioPrepared(seconds: number): void;
  /** One HTTP request of the API: `route` is the Express route template, or `unmatched`. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** How long a render waited for a render node: from its `queued` stage to its `rendering` stage. */
  renderQueueWait(seconds: number): void;
  /** The render queue's backlog as Temporal reports it (the control worker samples it). */
  renderBacklog(waiting: number, oldestAgeSeconds: number): void;
}

/** Counts nothing: for processes and tests that export no metrics. */
export const noMetrics: Metrics = {
  videoCreated: () => {},
  videoCompleted: () => {},
  videoFailed: () => {},
  refunded: () => {},
  creditsSpent: () => {},
  creditsGranted: () => {},
  rateLimited: () => {},
  webhookDelivered: () => {},
  pollCache: () => {},
  audioPrepared: () => {},
  httpRequest: () => {},
  renderQueueWait: () => {},
  renderBacklog: () => {},
};
