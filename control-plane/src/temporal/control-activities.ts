import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURE_TYPES, type ControlActivities } from '@petsing/workflows';
import { AudioRejected } from '../media/audio-preparer.ts';
import type { EmailService } from '../services/email.service.ts';
import type { VideoReconciler } from '../services/video-reconciler.service.ts';
import type { VideoService } from '../services/video.service.ts';
import { PermanentRenderFailure, VideoGone, type VideoRenderService } from '../services/video-render.service.ts';
import type { WebhookService } from '../services/webhook.service.ts';

/**
 * The control-plane activities, built from their dependencies. They only translate between Temporal and
 * the render and email services: expected failures become non-retryable ApplicationFailures carrying a code.
 * A video's status changes announce themselves (VideoTransitions emits each webhook event after the change).
 */
export function createControlActivities(
  { renders, videos, email, reconciler, webhooks }: { renders: VideoRenderService; videos: VideoService; email: EmailService; reconciler: VideoReconciler; webhooks: WebhookService },
): ControlActivities {
  return {
    beginRender: ({ videoId }) => translate(() => renders.beginRender(videoId)),
    beginRerender: ({ videoId }) => translate(() => renders.beginRerender(videoId)),
    prepareAudio: (input) => translate(() => renders.prepareAudio(input, Context.current().cancellationSignal)),
    recordProgress: ({ videoId, progress }) => renders.recordProgress(videoId, progress),
    recordStage: ({ videoId, stage }) => renders.enterStage(videoId, stage),
    completeVideo: ({ videoId, ...output }) => renders.complete(videoId, output),
    failVideo: ({ videoId, code, reason }) => renders.fail(videoId, { code, reason }),
    abandonRerender: ({ videoId, code, reason }) => renders.abandonRerender(videoId, { code, reason }),
    deleteVideoObjects: ({ videoId }) => renders.deleteObjects(videoId),
    beginTemplatePreview: ({ templateId }) => translate(() => renders.beginTemplatePreview(templateId)),
    completeTemplatePreview: ({ templateId, outputKey }) => renders.completeTemplatePreview(templateId, outputKey),
    enqueueFreeCreditsEmails: async ({ month }) => ({ enqueued: await email.freeCreditsRenewed(month) }),
    reconcileVideos: ({ graceSeconds }) => reconciler.reconcile(graceSeconds),
    cancelVideoAtDeadline: ({ videoId, deadlineSeconds }) => videos.cancelAtDeadline(videoId, deadlineSeconds),
    attemptWebhookDelivery: ({ deliveryId, attempt, last }) => webhooks.attempt(deliveryId, attempt, last),
  };
}

async function translate<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof VideoGone) throw ApplicationFailure.nonRetryable(error.message, FAILURE_TYPES.videoGone);
    if (error instanceof PermanentRenderFailure || error instanceof AudioRejected) {
      throw ApplicationFailure.create({
        message: error.message,
        type: FAILURE_TYPES.permanent,
        nonRetryable: true,
        details: [{ code: error.code }],
      });
    }
    throw error;
  }
}
