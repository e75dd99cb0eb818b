export { Petsing } from './client.ts';
export type {
  ApiAccount,
  ApiAudio,
  ApiCredits,
  ApiImage,
  ApiTemplate,
  ApiVideo,
  CreateVideoRequest,
  CreatedApiVideo,
  ErrorDetail,
  PetsingOptions,
  RequestOptions,
  VideoEvent,
  VideoEventOptions,
  Voice,
  WaitOptions,
  CreatedWebhookEndpoint,
  DefaultWebhookSecret,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
} from './client.ts';
export { PetsingError, VideoFailedError, WaitTimeoutError } from './errors.ts';
export type { FileInput, FileOptions } from './files.ts';
export type { RetryPolicy } from './retry.ts';
export { signWebhook, verifyWebhook, WebhookVerificationError } from './webhooks.ts';
export type { VerifyWebhookOptions, WebhookHeaders } from './webhooks.ts';
export type { components, paths } from './schema.ts';
