import type { ReconcileVideosResult } from '@petsing/workflows';
import type { Video } from '../db/schema.ts';
import type { Logger } from '../logging/logger.ts';
import type { VideoRepository } from '../repositories/video.repository.ts';
import type { RenderScheduling } from './ports/render-scheduling.ts';
import type { VideoTransitions } from './video-transitions.ts';

/** Unsettled videos read per query; a run goes through every page. */
const PAGE_SIZE = 100;

/** What a video whose render ended without settling it is failed with (its payment is given back). */
export const RENDER_LOST = {
  code: 'render_lost',
  reason: 'The render stopped before it finished. What the video cost has been given back; please create it again.',
} as const;

/**
 * Makes "charged" imply "rendered or refunded". A create commits the video and its charge, then starts the
 * render workflow (whose id is the video's); a process that dies in between leaves a paid video with no
 * workflow. Run by the reconciler workflow (RECONCILER_WORKFLOW), this finds every video still `pending`/`processing` after a
 * grace period and: leaves it alone while its workflow runs; starts the render when none was ever started
 * (the workflow id makes a start that raced the API's a no-op); fails and refunds it, exactly once, when
 * its workflow ended without settling it (terminated by hand, a fail step that ran out of retries). A paid
 * watermark removal (a video that already has an output) is restarted rather than refunded.
 */
export class VideoReconciler {
  constructor(
    private readonly videos: VideoRepository,
    private readonly transitions: VideoTransitions,
    private readonly scheduler: RenderScheduling,
    private readonly logger: Logger,
  ) {}

  async reconcile(graceSeconds: number, now = new Date()): Promise<ReconcileVideosResult> {
    const result: ReconcileVideosResult = { checked: 0, started: 0, failed: 0 };
    const before = new Date(now.getTime() - graceSeconds * 1000);
    let after: Video | undefined;
    for (;;) {
      const page = await this.videos.listUnsettled(before, PAGE_SIZE, after);
      for (const video of page) {
        const outcome = await this.settle(video);
        result.checked++;
        if (outcome !== 'running') result[outcome]++;
      }
      if (page.length < PAGE_SIZE) break;
      after = page[page.length - 1];
    }
    if (result.started + result.failed > 0) this.logger.warn(result, 'reconciled paid videos that had no running render');
    return result;
  }

  private async settle(video: Video): Promise<'running' | 'started' | 'failed'> {
    if (video.output_key) {
      if ((await this.scheduler.rerenderState(video.id)) === 'running') return 'running';
      await this.scheduler.startRerender(video.id);
      this.logger.warn({ videoId: video.id }, 'restarted a paid re-render that was not running');
      return 'started';
    }
    const state = await this.scheduler.renderState(video.id);
    if (state === 'running') return 'running';
    if (state === 'missing') {
      await this.videos.setWorkflowId(video.id, await this.scheduler.startRender(video.id));
      this.logger.warn({ videoId: video.id }, 'started the render of a paid video that had none');
      return 'started';
    }
    // Settled meanwhile (the workflow completed it just before it ended): fail() leaves it alone.
    const failed = await this.transitions.fail(video.id, RENDER_LOST);
    if (failed) this.logger.warn({ videoId: video.id }, 'failed and refunded a video whose render ended without settling it');
    return failed ? 'failed' : 'running';
  }
}
