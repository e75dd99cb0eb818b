import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURE_TYPES, type ControlActivities } from '@petsing/workflows';
import { AudioRejected } from '../media/audio-preparer.ts';
import type { EmailService } from '../services/email.service.ts';
import type { VideoReconciler } from '../services/video-reconciler.service.ts';
import type { VideoService } from '../services/video.service.ts';
import { PermanentRenderFailure, VideoGone, type VideoRenderService } from '../services/video-render.service.ts';
import type { VideoRepresenter, WebhookService } from '../services/webhook.service.ts';

/**
 * The control-plane activities, built from their dependencies. They only translate between Temporal and
 * the render and email services: expected failures become non-retryable ApplicationFailures carrying a code.
 * A video's transitions emit its webhook events in the same activity, after the change is stored: a retry
 * repeats both, and the emission is idempotent (WebhookService.emitVideoEvent). `represent` makes the events'
 * ApiVideo.
 */
export function createControlActivities(
  { renders, videos, email, reconciler, webhooks }: { renders: VideoRenderService; videos: VideoService; email: EmailService; reconciler: VideoReconciler; webhooks: WebhookService },
  represent: VideoRepresenter,
): ControlActivities {
  return {
    beginRender: ({ videoId }) =>
      translate(async () => {
        const plan = await renders.beginRender(videoId);
        await webhooks.emitVideoEvent(videoId, 'video.processing', represent);
        return plan;
      }),
    beginRerender: ({ videoId }) => translate(() => renders.beginRerender(videoId)),
    prepareAudio: ({ sourceAudioKey, targetKey }) =>
      translate(() => renders.prepareAudio(sourceAudioKey, targetKey, Context.current().cancellationSignal)),
    recordProgress: ({ videoId, progress }) => renders.recordProgress(videoId, progress),
    completeVideo: async ({ videoId, ...output }) => {
      await renders.complete(videoId, output);
      await webhooks.emitVideoEvent(videoId, 'video.completed', represent);
    },
    failVideo: async ({ videoId, code, reason }) => {
      await renders.fail(videoId, { code, reason });
      await webhooks.emitVideoEvent(videoId, 'video.failed', represent);
    },
    abandonRerender: ({ videoId, code, reason }) => renders.abandonRerender(videoId, { code, reason }),
    deleteVideoObjects: ({ videoId }) => renders.deleteObjects(videoId),
    beginTemplatePreview: ({ templateId }) => translate(() => renders.beginTemplatePreview(templateId)),
    completeTemplatePreview: ({ templateId, outputKey }) => renders.completeTemplatePreview(templateId, outputKey),
    enqueueFreeCreditsEmails: async ({ month }) => ({ enqueued: await email.freeCreditsRenewed(month) }),
    reconcileVideos: ({ graceSeconds }) => reconciler.reconcile(graceSeconds, (videoId) => webhooks.emitVideoEvent(videoId, 'video.failed', represent)),
    cancelVideoAtDeadline: async ({ videoId, deadlineSeconds }) => {
      await videos.cancelAtDeadline(videoId, deadlineSeconds);
      await webhooks.emitVideoEvent(videoId, 'video.failed', represent);
    },
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
