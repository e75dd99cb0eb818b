/**
 * Names shared by every process and by workflow code. Dependency-free on purpose: workflow code imports
 * this module, and workflow bundles must stay deterministic and small.
 */

export const TASK_QUEUES = {
  /** Served by control-plane workers: database, audio preparation, notifications. */
  control: 'petsing-control',
  /** Served only by render nodes (GPU machines): inference and encoding. */
  render: 'petsing-render-gpu',
  /**
   * Served by render nodes beside the render queue, with slots of its own: photo checks, which a person
   * waits for, so they never queue behind a render.
   */
  detect: 'petsing-render-detect',
} as const;

/** One render workflow per video: the id is derived from the video id, so a duplicate start is impossible. */
export const renderWorkflowId = (videoId: string) => `render-video-${videoId}`;
/** The watermark-removal re-render of a video (one at a time per video). */
export const rerenderWorkflowId = (videoId: string) => `rerender-video-${videoId}`;

/** The timer of a video created with deadline_seconds: one per video. */
export const videoDeadlineWorkflowId = (videoId: string) => `video-deadline-${videoId}`;

/** The face check of a photo the service holds (POST /v1/images): one per image. */
export const detectFaceWorkflowId = (imageId: string) => `detect-face-${imageId}`;

/**
 * One webhook delivery's workflow; a redelivery gets its own run, named by the first attempt it makes, so
 * the id stays unique while the webhook-id the receiver sees stays the delivery's.
 */
export const webhookDeliveryWorkflowId = (deliveryId: string, firstAttempt = 1) =>
  firstAttempt === 1 ? `webhook-delivery-${deliveryId}` : `webhook-delivery-${deliveryId}-from-${firstAttempt}`;

/** The one-off render of a template's preview clip. */
/** One preview render per template and assets version (a new version renders its clip again). */
export const templatePreviewWorkflowId = (templateId: number, assetsVersion: string) => `template-preview-${templateId}-${assetsVersion}`;

/**
 * The monthly schedule that emails every opted-in user when their free web credits renew: 00:00 UTC on
 * the 1st. The control worker creates it once per Temporal namespace.
 */
export const FREE_CREDITS_EMAIL_SCHEDULE = {
  id: 'free-credits-renewed-email',
  cron: '0 0 1 * *',
  workflowType: 'sendFreeCreditsRenewedEmails',
} as const;

/**
 * The long-running workflow that settles every paid video left without a running render (an API process that
 * died between the charge and the workflow start, a workflow terminated by hand): it starts the render, or
 * fails the video and refunds it. One per namespace, whatever the number of control workers; every control
 * worker starts it, or sends it its settings, at start. `settingsSignal` carries new ReconcilerSettings.
 */
export const RECONCILER_WORKFLOW = {
  id: 'reconcile-videos',
  workflowType: 'reconcileVideos',
  settingsSignal: 'reconcilerSettings',
} as const;

/** The Temporal Schedule that ran the reconciler once a minute before it became one workflow; removed at start where it remains. */
export const RETIRED_RECONCILE_SCHEDULE_ID = 'reconcile-videos';

/** Progress updates a render node sends to its workflow while it renders. */
export const RENDER_PROGRESS_SIGNAL = 'renderProgress';
/** Sent by a render node when it takes a render (each attempt), so the video leaves its `queued` stage. */
export const RENDER_STARTED_SIGNAL = 'renderStarted';
/** Query answering the current render progress (0-100) of a running workflow. */
export const PROGRESS_QUERY = 'progress';

/** Object keys a video owns; deleting a video deletes its prefix. */
export const videoObjectPrefix = (id: string) => `videos/${id}/`;
export const preparedAudioKey = (id: string) => `videos/${id}/audio-prepared.wav`;
export const deliveryAudioKey = (id: string) => `videos/${id}/audio-delivery.m4a`;
/** Each render writes new keys, so a re-render replaces the output only once it has succeeded. */
export const renderOutputKeys = (id: string, renderId: string) => ({
  output: `videos/${id}/video-${renderId}.mp4`,
  thumbnail: `videos/${id}/thumbnail-${renderId}.jpg`,
});

/** Failure types the workflows tell apart. Permanent ones are non-retryable ApplicationFailures. */
export const FAILURE_TYPES = {
  /** The inputs can never render (undecodable image, corrupt audio, no usable face...). */
  permanent: 'PermanentRenderFailure',
  /** The video no longer exists (deleted while queued). */
  videoGone: 'VideoGone',
  /**
   * A value crossing a process boundary broke its contract schema (contract.ts): an activity's input, an
   * activity's result or a workflow's input. Non-retryable: the same value would break it again.
   */
  contract: 'ContractViolation',
  /**
   * A render whose node stopped mid-render, handed back by the node started after it on the same host (retryable: it
   * renders again at once, on any node).
   */
  renderNodeLost: 'RenderNodeLost',
} as const;

