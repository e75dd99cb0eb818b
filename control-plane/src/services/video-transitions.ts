import type { Video, WebhookEventType } from '../db/schema.ts';
import type { Refund, RenderOutput, VideoRepository } from '../repositories/video.repository.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';

/** Announces a video's new status to whoever subscribed (WebhookService); idempotent per video and event. */
export interface VideoEvents {
  emitVideoEvent(videoId: string, event: WebhookEventType): Promise<void>;
}

type Failure = { code: string; reason: string };

/**
 * Every change of a video's status, each followed by its webhook event, so no caller can change a status and
 * forget the event. The event is emitted after the change is stored, whether or not this call made the change:
 * a retried activity repeats both, and the emission sends nothing twice and nothing for a video that has moved
 * on. An emission that fails throws, so the activity that asked is retried.
 *
 * The metrics of completions, failures and refunds are counted here too, only when this call made the change
 * (a retry that finds the video completed, failed or refunded already counts nothing).
 */
export class VideoTransitions {
  constructor(
    private readonly videos: VideoRepository,
    private readonly events: VideoEvents,
    private readonly metrics: Metrics = noMetrics,
  ) {}

  async markProcessing(videoId: string): Promise<Video | undefined> {
    const video = await this.videos.markProcessing(videoId);
    await this.events.emitVideoEvent(videoId, 'video.processing');
    return video;
  }

  /** A paid watermark removal re-renders a completed video; its clients saw it complete and hear of it once more only when it completes again. */
  markRerendering(videoId: string): Promise<Video | undefined> {
    return this.videos.markRerendering(videoId);
  }

  async complete(videoId: string, output: RenderOutput): Promise<{ video: Video; replaced: string[] } | undefined> {
    const result = await this.videos.complete(videoId, output);
    if (result?.firstCompletion) this.metrics.videoCompleted();
    await this.events.emitVideoEvent(videoId, 'video.completed');
    return result && { video: result.video, replaced: result.replaced };
  }

  /** A failed re-render leaves the video completed with its earlier output: nothing changed for its clients. */
  abandonRerender(videoId: string, failure: Failure): Promise<Video | undefined> {
    return this.videos.abandonRerender(videoId, failure);
  }

  /** Fails and refunds the video, exactly once; undefined when it had settled already. */
  async fail(videoId: string, failure: Failure): Promise<Video | undefined> {
    const video = (await this.failAndRefund(videoId, failure))?.video;
    await this.events.emitVideoEvent(videoId, 'video.failed');
    return video;
  }

  /**
   * A create whose render could not be queued fails and refunds its video without an event: the create answers
   * 503, saying what was charged and given back, rather than the video (and the queue that would deliver an event
   * is the one that is down). Answers the refund, as the ledger records it.
   */
  async failUnqueued(videoId: string, failure: Failure): Promise<Refund | undefined> {
    return (await this.failAndRefund(videoId, failure))?.refund;
  }

  /** Fails and refunds an unfinished video with code `canceled`; a completed or failed one is answered as it is. */
  async cancel(videoId: string, reason: string): Promise<{ outcome: 'canceled' | 'completed' | 'failed'; video: Video } | undefined> {
    const result = await this.videos.cancel(videoId, reason);
    if (result?.outcome === 'canceled') {
      this.metrics.videoFailed(result.video.failure_code ?? 'canceled');
      this.counted(result.refund);
    }
    if (result && result.outcome !== 'completed') await this.events.emitVideoEvent(videoId, 'video.failed');
    return result && { outcome: result.outcome, video: result.video };
  }

  private async failAndRefund(videoId: string, failure: Failure) {
    const result = await this.videos.fail(videoId, failure);
    if (result?.failed) this.metrics.videoFailed(failure.code);
    this.counted(result?.refund);
    return result;
  }

  private counted(refund: Refund | undefined): void {
    if (!refund) return;
    this.metrics.refunded(refund.payment);
    if (refund.credits > 0) this.metrics.creditsGranted('refund', refund.credits);
  }
}
