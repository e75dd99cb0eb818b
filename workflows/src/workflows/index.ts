export { renderVideo, rerenderWithoutWatermark, renderTemplatePreview, renderProgressSignal, progressQuery } from './render-video.workflow.ts';
export { sendFreeCreditsRenewedEmails } from './lifecycle-email.workflow.ts';
export { detectFace } from './detect-face.workflow.ts';
export { reconcileVideos } from './reconcile-videos.workflow.ts';
export { enforceVideoDeadline } from './video-deadline.workflow.ts';
export { deliverWebhook } from './deliver-webhook.workflow.ts';
