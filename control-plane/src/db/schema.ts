import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { FaceHints, FaceSource, FoundFace, PhotoCheck, RenderStage, VideoAspect, VideoSync } from '@petsing/workflows';
import type { CreditPackKey, PlanType } from '../domain/pricing.ts';
import type { Scope } from '../domain/scopes.ts';

/** Kysely's view of the schema built by the migrations in ./migrations. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type SubscriptionStatus = 'none' | 'active' | 'trialing' | 'past_due' | 'canceled' | 'unpaid' | 'incomplete';
export type VideoStatus = 'pending' | 'processing' | 'completed' | 'failed';
type VideoOrigin = 'web' | 'api';
type VideoPayment = 'api_credit' | 'free_credit' | 'subscription';
export type LedgerReason = 'purchase' | 'video_create' | 'refund' | 'grant';
type PurchaseKind = 'watermark_removal' | 'credit_pack';
type PurchaseStatus = 'pending' | 'paid' | 'expired';

interface UsersTable {
  id: Generated<string>;
  identity_subject: string | null;
  email: string;
  email_opt_out: Generated<boolean>;
  unsubscribe_token_hash: string;
  subscription_status: Generated<SubscriptionStatus>;
  subscription_id: string | null;
  subscription_plan: PlanType | null;
  subscription_current_period_end: NullableTimestamp;
  subscription_cancel_at_period_end: Generated<boolean>;
  subscription_updated_at: NullableTimestamp;
  payment_customer_id: string | null;
  free_credits: Generated<number>;
  /** 'YYYY-MM-DD' from Postgres; PGlite answers a Date at UTC midnight. */
  free_credits_month: ColumnType<string | Date, Date | string | undefined, Date | string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface TemplatesTable {
  id: number;
  name: string;
  description: Generated<string>;
  audio_key: string;
  audio_duration_ms: number;
  preview_image_key: string | null;
  preview_video_key: string | null;
  prepared_audio_key: string | null;
  prepared_audio_ms: number | null;
  created_at: Timestamp;
}

interface VideosTable {
  id: Generated<string>;
  user_id: string;
  origin: VideoOrigin;
  payment: VideoPayment;
  template_id: number | null;
  status: VideoStatus;
  progress: Generated<number>;
  /** Where a `processing` video's render stands, and since when (RenderStage); null otherwise. */
  render_stage: Generated<RenderStage | null>;
  render_stage_at: NullableTimestamp;
  image_key: string | null;
  audio_key: string | null;
  output_key: string | null;
  thumbnail_key: string | null;
  has_watermark: boolean;
  failure_code: string | null;
  failure_reason: string | null;
  workflow_id: string | null;
  source_image_url: string | null;
  /** The person's corrections of the face; null when none were given. */
  face_hints: ColumnType<FaceHints | null, string | null | undefined, string | null>;
  /** The output shape (square 720×720, 4:5 720×900, 9:16 720×1280); 'square' when none was asked for. */
  aspect: Generated<VideoAspect>;
  /** The hosted audio (POST /v1/audio, speech, soundtrack) the video was made from; null for templates and uploads with the create. */
  audio_id: string | null;
  credit_returned_at: NullableTimestamp;
  /** POST /v1/videos' webhook_url: told of this video's events, signed with the account's default webhook secret. */
  webhook_url: Generated<string | null>;
  /** The photo check the video was made from (its face, shown to the owner, and the finder's version); null: never checked. */
  photo_check: ColumnType<PhotoCheck | null, string | null | undefined, string | null>;
  /** Where the last finished render's face came from; null until a render finishes (and for renders before it was recorded). */
  face_source: Generated<FaceSource | null>;
  /** The face finder whose landmarks the last render used (null: every point given, or not recorded). */
  face_model: Generated<string | null>;
  /** The last finished render's sync report (VideoSync); null until a render finishes (and for renders before it was recorded). */
  sync: ColumnType<VideoSync | null, string | null | undefined, string | null>;
  /** Where in its audio the video begins, as its creator asked; null: chosen when the audio is prepared. */
  audio_start_seconds: Generated<number | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: NullableTimestamp;
}

interface CreditBalancesTable {
  user_id: string;
  balance: Generated<number>;
}

interface CreditLedgerTable {
  id: Generated<string>;
  user_id: string;
  delta: number;
  reason: LedgerReason;
  video_id: string | null;
  idempotency_key: string | null;
  created_at: Timestamp;
}

interface ApiKeysTable {
  id: Generated<string>;
  user_id: string;
  name: Generated<string>;
  display_prefix: string;
  key_hash: string;
  scopes: Scope[];
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface OauthClientsTable {
  id: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: Generated<string>;
  client_secret_hash: string | null;
  metadata: Generated<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface OauthAuthorizationCodesTable {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: Scope[];
  code_challenge: string;
  code_challenge_method: 'S256';
  resource: string | null;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface OauthTokensTable {
  id: Generated<string>;
  token_hash: string;
  kind: 'access' | 'refresh';
  client_id: string;
  user_id: string;
  scopes: Scope[];
  family_id: string;
  authorization_code_hash: string | null;
  resource: string | null;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
}

interface PaymentEventsTable {
  id: string;
  type: string;
  object_created_at: Timestamp;
  processed_at: Timestamp;
}

interface PurchasesTable {
  id: Generated<string>;
  checkout_session_id: string;
  user_id: string;
  kind: PurchaseKind;
  video_id: string | null;
  pack: CreditPackKey | null;
  credits: number | null;
  /** In minor units of `currency` (lowercase ISO 4217, as Stripe writes it). */
  amount: number;
  currency: string;
  status: Generated<PurchaseStatus>;
  paid_at: NullableTimestamp;
  /** Credit pack: credited; watermark removal: re-render started. */
  fulfilled_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface EmailOutboxTable {
  id: Generated<string>;
  user_id: string | null;
  dedupe_key: string;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  headers: Generated<Record<string, string>>;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: NullableTimestamp;
}

interface HostedAudioTable {
  id: Generated<string>;
  user_id: string;
  source: 'tts' | 'social' | 'upload';
  object_key: string;
  duration_ms: number;
  /** Usable for creates until then. */
  expires_at: Date;
  created_at: Timestamp;
}

interface ImagesTable {
  id: string;
  user_id: string;
  object_key: string;
  width: number;
  height: number;
  /** What a render node found; null: no pet face. Written as JSON text. */
  face: ColumnType<FoundFace | null, string | null, string | null>;
  /** The version of the face finder that checked it (FaceModelVersion); null: checked before versions were stored. */
  face_model: Generated<string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type WebhookEventType = 'video.processing' | 'video.completed' | 'video.failed';

interface WebhookEndpointsTable {
  id: Generated<string>;
  user_id: string;
  url: string;
  events: WebhookEventType[];
  /** Encrypted (WebhookSecrets); the plain secret is shown once. */
  secret_ciphertext: string;
  /** The secret before the last rotation; it signs too until previous_secret_expires_at. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** The first failed attempt since the last success; null while deliveries succeed. */
  failing_since: NullableTimestamp;
  disabled_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface WebhookAccountSecretsTable {
  user_id: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: NullableTimestamp;
  created_at: Timestamp;
}

export type WebhookDeliveryState = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  /** Sent as webhook-id on every attempt. */
  id: Generated<string>;
  user_id: string;
  endpoint_id: string | null;
  /** The endpoint id, or 'video' for the video's own webhook_url: one delivery per (video, event, target). */
  target: string;
  url: string;
  video_id: string | null;
  event_type: string;
  /** The exact body (JSON text) sent on every attempt. */
  payload: string;
  state: Generated<WebhookDeliveryState>;
  attempts: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: Timestamp;
  status_code: number | null;
  latency_ms: number;
  response_snippet: string | null;
  error: string | null;
}

interface RateLimitWindowsTable {
  bucket: string;
  window_start: Timestamp;
  hits: number;
}

interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  request_hash: string;
  response_status: number | null;
  response_body: unknown;
  created_at: Timestamp;
}

export interface Database {
  rate_limit_windows: RateLimitWindowsTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  templates: TemplatesTable;
  videos: VideosTable;
  credit_balances: CreditBalancesTable;
  credit_ledger: CreditLedgerTable;
  api_keys: ApiKeysTable;
  oauth_clients: OauthClientsTable;
  oauth_authorization_codes: OauthAuthorizationCodesTable;
  oauth_tokens: OauthTokensTable;
  payment_events: PaymentEventsTable;
  purchases: PurchasesTable;
  email_outbox: EmailOutboxTable;
  hosted_audio: HostedAudioTable;
  images: ImagesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_account_secrets: WebhookAccountSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Template = Selectable<TemplatesTable>;
export type Video = Selectable<VideosTable>;
export type NewVideo = Insertable<VideosTable>;
export type LedgerEntry = Selectable<CreditLedgerTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type HostedAudio = Selectable<HostedAudioTable>;
export type Purchase = Selectable<PurchasesTable>;
export type NewPurchase = Insertable<PurchasesTable>;
export type Image = Selectable<ImagesTable>;
export type WebhookEndpoint = Selectable<WebhookEndpointsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type WebhookDeliveryAttempt = Selectable<WebhookDeliveryAttemptsTable>;
