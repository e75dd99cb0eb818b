import { z } from 'zod';
import { TERMINAL_VIDEO_STATUSES } from './api-rules.ts';

/**
 * The contract between petsing processes. Everything that crosses a process boundary (workflow inputs,
 * activity inputs and outputs) has a zod schema here, and is parsed with it where it is received
 * (contract-parsing.ts): an activity's input by the worker before the activity runs (parsedActivities), its
 * result by the workflow (proxyParsedActivities), a workflow's input by the workflow. A value that breaks its
 * schema is a non-retryable ContractViolation naming each field.
 */

export * from './constants.ts';

export const videoId = z.uuid();

export const RenderVideoInput = z.object({ videoId });
export type RenderVideoInput = z.infer<typeof RenderVideoInput>;

export const RerenderInput = z.object({ videoId });
export type RerenderInput = z.infer<typeof RerenderInput>;

export const RenderOutcome = z.object({
  videoId,
  /** The video's terminal status. */
  status: z.enum(TERMINAL_VIDEO_STATUSES),
  failureCode: z.string().optional(),
});
export type RenderOutcome = z.infer<typeof RenderOutcome>;

/** A point as fractions (0-1) of the photo's width and height, after EXIF orientation. */
export const FacePoint = z.object({ x: z.number().min(0).max(1), y: z.number().min(0).max(1) });
export type FacePoint = z.infer<typeof FacePoint>;

/** The animals petsing animates, as the pet-face model names them. */
export const PetSpecies = z.enum(['dog', 'cat', 'bird', 'rabbit', 'hamster', 'guinea_pig']);
export type PetSpecies = z.infer<typeof PetSpecies>;

/**
 * What the person says about their pet's face (`face` on every create surface): the mouth, and
 * optionally the nose, chin, eyes and species. A render uses the mouth point as given (refined locally
 * at most); a species chooses the kind of mouth drawn over the one the pet-face model named.
 */
export const FaceHints = z.object({
  mouth: FacePoint,
  nose: FacePoint.optional(),
  chin: FacePoint.optional(),
  eyes: z.tuple([FacePoint, FacePoint]).optional(),
  species: PetSpecies.optional(),
});
export type FaceHints = z.infer<typeof FaceHints>;

/** The output video's shape (`aspect` on every create surface): square 720×720, 4:5 720×900, 9:16 720×1280. */
export const VideoAspect = z.enum(['square', '4:5', '9:16']);
export type VideoAspect = z.infer<typeof VideoAspect>;
export const DEFAULT_VIDEO_ASPECT: VideoAspect = 'square';

/**
 * A song's mouth motion known in advance (template songs, from their score): keyframes of seconds,
 * openness and roundness (0-1), in time order. The render follows it instead of listening.
 */
export const MouthTrack = z.object({
  keyframes: z
    .array(z.tuple([z.number().min(0), z.number().min(0).max(1), z.number().min(0).max(1)]))
    .min(2)
    .refine((frames) => frames.every((frame, i) => i === 0 || frame[0] >= frames[i - 1]![0]), 'keyframes must be in time order'),
});
export type MouthTrack = z.infer<typeof MouthTrack>;

/** How the head is turned: both eyes seen, one partly hidden, or one eye only (the other estimated). */
export const FaceView = z.enum(['frontal', 'three-quarter', 'profile']);
export type FaceView = z.infer<typeof FaceView>;

/** A point found by a render node, as fractions of the photo; estimated points may lie just outside 0-1. */
const FoundPoint = z.object({ x: z.number(), y: z.number() });

/** The landmarks a render node found, as fractions of the photo's width and height (after EXIF orientation). */
export const FoundFace = z.object({
  confidence: z.number().min(0).max(1),
  /** Left to right in the image; an eye hidden in a profile is estimated. */
  eyes: z.tuple([FoundPoint, FoundPoint]),
  /** For birds, the beak tip. */
  nose: FoundPoint,
  mouth: FoundPoint,
  mouth_corners: z.tuple([FoundPoint, FoundPoint]).nullable(),
  chin: FoundPoint,
  head: z.object({ left: z.number(), top: z.number(), width: z.number(), height: z.number() }),
  /** The pet-face model's answers (absent from a custom detector or a face found before they existed). */
  species: PetSpecies.optional(),
  view: FaceView.optional(),
  /** The mouth is already open in the photo (tongue out, panting, an open beak). */
  mouth_open: z.boolean().optional(),
  /**
   * How a video frames this face: `whole-head` fills the frame with the head; `small-face`: the pet is too
   * small in the photo to fill it without enlarging the photo more than twice, so it shows smaller.
   */
  framing: z.enum(['whole-head', 'small-face']).optional(),
});
export type FoundFace = z.infer<typeof FoundFace>;

export const DetectFaceInput = z.object({ imageKey: z.string() });
export type DetectFaceInput = z.infer<typeof DetectFaceInput>;

/**
 * Which face finder answered: the pet-face model's two model_versions (`detector-…+landmarks-…`), or a custom
 * detector's `onnx:` and the start of its file's SHA-256. A render uses a stored face only from the same finder.
 */
export const FaceModelVersion = z.string().min(1);

/** The photo's size after EXIF orientation, and its face (null: no pet face found). */
export const DetectFaceResult = z.object({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  face: FoundFace.nullable(),
  /** Absent from render nodes older than the field. */
  model: FaceModelVersion.optional(),
});
export type DetectFaceResult = z.infer<typeof DetectFaceResult>;

/**
 * What the photo check found and the owner was shown, stored with the video: its face (null: none, so the
 * person placed the mouth) and the finder that found it (absent: checked before versions were stored).
 */
export const PhotoCheck = z.object({ face: FoundFace.nullable(), model: FaceModelVersion.optional() });
export type PhotoCheck = z.infer<typeof PhotoCheck>;

/**
 * Where a render's face came from: `photo_check`, the stored check's face (the person's hints over it);
 * `given`, every point given by the person (nothing found); `render_no_check`, found again at the render, the
 * photo never having been checked; `render_model_changed`, found again because the stored face came from
 * another (or an unrecorded) model version than the render node's.
 */
export const FaceSource = z.enum(['photo_check', 'given', 'render_no_check', 'render_model_changed']);
export type FaceSource = z.infer<typeof FaceSource>;

/** The face a render used: its source and the finder whose landmarks it is (absent for `given`). */
export const RenderedFace = z.object({ source: FaceSource, model: FaceModelVersion.optional() });
export type RenderedFace = z.infer<typeof RenderedFace>;

/**
/**
 * A soundtrack's stems (control-plane/src/media/separator/vocal-stems.ts): mono 16 kHz WAV object keys at the source's
 * level. `accompanimentKey` is null for a voice alone (text-to-speech, `origin: clean`, whose vocal stem is the
 * prepared audio itself); `origin` says whether this preparation separated, reused stored stems, or had a clean voice.
 */
export const AudioStems = z.object({
  vocalKey: z.string(),
  accompanimentKey: z.string().nullable(),
  origin: z.enum(['separated', 'reused', 'clean']),
});
export type AudioStems = z.infer<typeof AudioStems>;

/**
 * A prepared audio: `audioKey`, the analysis copy the render listens to (mono 16 kHz WAV); `deliveryAudioKey`, the
 * video's soundtrack (stereo 48 kHz AAC in M4A, −14 LUFS), absent from audio prepared before it existed; `stems` when
 * the audio was separated (absent for template songs and preparations from before).
 */
export const PreparedAudio = z.object({
  audioKey: z.string(),
  durationSeconds: z.number().positive(),
  /** Where in the source the prepared copies (and stems) begin, in seconds; absent: at its start. */
  startSeconds: z.number().min(0).optional(),
  deliveryAudioKey: z.string().optional(),
  stems: AudioStems.optional(),
});
export type PreparedAudio = z.infer<typeof PreparedAudio>;

/** What the control plane hands the pipeline after vetting the video's inputs. */
export const RenderPlan = z.object({
  videoId,
  imageKey: z.string(),
  sourceAudioKey: z.string(),
  /** Set when the audio is already prepared (template songs are prepared once, at seed time). */
  preparedAudio: PreparedAudio.optional(),
  watermark: z.boolean(),
  /** The person's corrections of the face (fractions of the photo). */
  face: FaceHints.optional(),
  /** Absent in plans started before shapes existed: square. */
  aspect: VideoAspect.optional(),
  /** Template songs: the object key of their MouthTrack (JSON). */
  mouthTrackKey: z.string().optional(),
  /** The photo check's face, which the render uses as it is; absent (a photo never checked, a plan from before): the render finds the face. */
  photoCheck: PhotoCheck.optional(),
  /** The audio is a voice alone (text-to-speech): its preparation separates nothing. */
  cleanVoice: z.boolean().optional(),
  /** Where in the audio the video begins, as its creator asked (`audio_start_seconds`); absent: chosen at preparation. */
  audioStartSeconds: z.number().min(0).optional(),
});
export type RenderPlan = z.infer<typeof RenderPlan>;

/**
 * `targetKey`: where the analysis copy goes; `deliveryKey`: the soundtrack's (absent from workflows started before it);
 * `cleanVoice`: the audio is a voice alone (RenderPlan.cleanVoice); absent, it is separated into vocals and the rest.
 * The result's `startSeconds` says where in the source the prepared copies begin.
 */
export const PrepareAudioInput = z.object({
  sourceAudioKey: z.string(),
  targetKey: z.string(),
  deliveryKey: z.string().optional(),
  cleanVoice: z.boolean().optional(),
  /** RenderPlan.audioStartSeconds; absent: a source longer than a video is cut at its window with the most singing. */
  startSeconds: z.number().min(0).optional(),
});
export type PrepareAudioInput = z.infer<typeof PrepareAudioInput>;

/**
 * Where a `processing` video's render stands, in order: `preparing` (its plan and audio), `queued` (waiting for a
 * render node), `rendering` (a node took it). A stage is never entered twice, nor an earlier one after a later.
 */
export const RENDER_STAGES = ['preparing', 'queued', 'rendering'] as const;
export const RenderStage = z.enum(RENDER_STAGES);
export type RenderStage = z.infer<typeof RenderStage>;

/** The stages the workflow records; `preparing` is entered by beginRender itself. */
export const RecordStageInput = z.object({ videoId, stage: RenderStage.exclude(['preparing']) });
export type RecordStageInput = z.infer<typeof RecordStageInput>;

/** A render's progress in percent, as the workflow persists it (in steps; never 100 before the video completes). */
export const RecordProgressInput = z.object({ videoId, progress: z.number().int().min(0).max(100) });
export type RecordProgressInput = z.infer<typeof RecordProgressInput>;

export const RenderLipSyncInput = z.object({
  /** The video id, or another job's id (template previews); used in logs. */
  jobId: z.string(),
  /** The workflow to signal progress to. */
  workflowId: z.string(),
  imageKey: z.string(),
  /** The analysis copy of the audio (PreparedAudio): what the render listens to. */
  audioKey: z.string(),
  /** The soundtrack, copied into the MP4 as it is; absent (a render planned before it existed): the analysis copy is encoded. */
  deliveryAudioKey: z.string().optional(),
  watermark: z.boolean(),
  outputKey: z.string(),
  thumbnailKey: z.string(),
  /** The person's corrections of the face (fractions of the photo); the render uses their mouth point. */
  face: FaceHints.optional(),
  aspect: VideoAspect.optional(),
  /** A MouthTrack (JSON) to follow instead of analysing the audio. */
  mouthTrackKey: z.string().optional(),
  /** The photo check's face: used without detecting again when the node's face finder is the one that found it. */
  photoCheck: PhotoCheck.optional(),
  /**
   * The audio's stems (PreparedAudio.stems): the mouth follows the vocal stem and rests where it holds no voice; the
   * accompaniment's beats move the head. Absent (templates, audio prepared before stems, renders planned before the
   * field): the mouth follows the analysis copy.
   */
  stems: AudioStems.optional(),
  /**
   * At most this size for this render (a template preview's, TEMPLATE_PREVIEW_OUTPUT): output width and frames per
   * second, each capped by the node's own. Absent: the node's RENDER_OUTPUT_SIZE and RENDER_FPS.
   */
  atMost: z.object({ width: z.number().int().min(64).multipleOf(2), fps: z.number().int().min(1) }).optional(),
});
export type RenderLipSyncInput = z.infer<typeof RenderLipSyncInput>;

/**
 * A template's example clip plays in a card of the template picker on a phone, after a tap: half of the largest
 * output's width at 25 frames a second is sharp there, and a first start of a node set to 1080 px at 50 fps renders
 * its seven previews in about a fifth of the time (and a phone downloads a quarter of the bytes).
 */
export const TEMPLATE_PREVIEW_OUTPUT = { width: 540, fps: 25 } as const;

/**
 * How the mouth followed the singing, as the render measured it (the video's sync report): whether the vocal track
 * holds a voice at all; Pearson r between the mouth's opening and the vocal track's loudness, frame by frame (null
 * without a voice); of the frames where only instruments play, the share with the mouth at rest (null when there are
 * none).
 */
export const RenderSync = z.object({
  vocalsFound: z.boolean(),
  mouthVoiceR: z.number().min(-1).max(1).nullable(),
  instrumentalRestShare: z.number().min(0).max(1).nullable(),
});
export type RenderSync = z.infer<typeof RenderSync>;

/**
 * A video's sync report as recorded when its render completes: the render's RenderSync and the window of the source
 * audio the video sings (where it starts in the source and how long it lasts, in seconds).
 */
export const VideoSync = RenderSync.extend({
  audioStartSeconds: z.number().min(0),
  audioDurationSeconds: z.number().positive(),
});
export type VideoSync = z.infer<typeof VideoSync>;

export const RenderLipSyncResult = z.object({
  outputKey: z.string(),
  thumbnailKey: z.string(),
  durationSeconds: z.number().positive(),
  frames: z.number().int().positive(),
  /** Where the face came from; absent from render nodes older than the field. */
  face: RenderedFace.optional(),
  /** The sync report; absent from render nodes older than the field. */
  sync: RenderSync.optional(),
  /**
   * How the video framed the face (FoundFace.framing): `small-face` when the photo's resolution could not bring the
   * head up to its share of the frame without enlarging it more than twice. Absent from render nodes older than the field.
   */
  framing: z.enum(['whole-head', 'small-face']).optional(),
});
export type RenderLipSyncResult = z.infer<typeof RenderLipSyncResult>;

export const CompleteVideoInput = z.object({
  videoId,
  outputKey: z.string(),
  thumbnailKey: z.string(),
  watermark: z.boolean(),
  /** Recorded on the video (face_source, face_model); absent when the render node did not say. */
  face: RenderedFace.optional(),
  /** Recorded on the video (videos.sync); absent when the render node did not say (older nodes). */
  sync: VideoSync.optional(),
});
export type CompleteVideoInput = z.infer<typeof CompleteVideoInput>;

export const FailVideoInput = z.object({ videoId, code: z.string(), reason: z.string() });
export type FailVideoInput = z.infer<typeof FailVideoInput>;

/** The video's stored objects to remove, except keepKeys. */
export const DeleteVideoObjectsInput = z.object({ videoId, keepKeys: z.array(z.string()) });
export type DeleteVideoObjectsInput = z.infer<typeof DeleteVideoObjectsInput>;

export const TemplatePreviewInput = z.object({ templateId: z.number().int().positive() });
export type TemplatePreviewInput = z.infer<typeof TemplatePreviewInput>;

export const TemplatePreviewPlan = z.object({
  imageKey: z.string(),
  /** The drawn sample pet's landmarks: a drawing is no photo the pet-face model accepts, so they are given. */
  face: FaceHints.optional(),
  preparedAudio: PreparedAudio,
  outputKey: z.string(),
  thumbnailKey: z.string(),
  mouthTrackKey: z.string().optional(),
});
export type TemplatePreviewPlan = z.infer<typeof TemplatePreviewPlan>;

export const CompleteTemplatePreviewInput = TemplatePreviewInput.extend({ outputKey: z.string() });
export type CompleteTemplatePreviewInput = z.infer<typeof CompleteTemplatePreviewInput>;

/** The calendar month (YYYY-MM, UTC) whose free-credit renewal is announced. */
export const FreeCreditsEmailsInput = z.object({ month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/) });
export type FreeCreditsEmailsInput = z.infer<typeof FreeCreditsEmailsInput>;

/** How many users the month's email was queued for (none twice). */
export const FreeCreditsEmailsResult = z.object({ enqueued: z.number().int().nonnegative() });
export type FreeCreditsEmailsResult = z.infer<typeof FreeCreditsEmailsResult>;

/** Videos unsettled for longer than this are checked against Temporal (the API starts a render within moments). */
export const ReconcileVideosInput = z.object({ graceSeconds: z.number().int().positive() });
export type ReconcileVideosInput = z.infer<typeof ReconcileVideosInput>;

/** The reconciler workflow's settings: its grace period, and the pause between two rounds. */
export const ReconcilerSettings = ReconcileVideosInput.extend({ intervalSeconds: z.number().int().positive() });
export type ReconcilerSettings = z.infer<typeof ReconcilerSettings>;

/** What one reconciliation did: videos looked at, renders started (or re-renders restarted), videos failed and refunded. */
export const ReconcileVideosResult = z.object({
  checked: z.number().int().nonnegative(),
  started: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type ReconcileVideosResult = z.infer<typeof ReconcileVideosResult>;

/**
 * One webhook delivery (its webhook-id is deliveryId): attempts numbered from firstAttempt, waiting
 * retryDelaysSeconds[i] after the i-th failed one (the schedule is fixed when the delivery starts, so a
 * changed setting never alters a running workflow's history).
 */
export const DeliverWebhookInput = z.object({
  deliveryId: z.uuid(),
  firstAttempt: z.number().int().positive(),
  retryDelaysSeconds: z.array(z.number().int().positive()),
});
export type DeliverWebhookInput = z.infer<typeof DeliverWebhookInput>;

/** One attempt of a webhook delivery; `last`: no attempt follows a failure. */
export const AttemptWebhookDeliveryInput = z.object({ deliveryId: z.uuid(), attempt: z.number().int().positive(), last: z.boolean() });
export type AttemptWebhookDeliveryInput = z.infer<typeof AttemptWebhookDeliveryInput>;

/** delivered: a 2xx in time; failed: try again later; abandoned: nothing to deliver to any more (endpoint deleted or disabled). */
export const WebhookAttemptOutcome = z.enum(['delivered', 'failed', 'abandoned']);
export type WebhookAttemptOutcome = z.infer<typeof WebhookAttemptOutcome>;

/** A video's deadline (deadline_seconds of POST /v1/videos), counted from its create. */
export const VideoDeadlineInput = z.object({ videoId, deadlineSeconds: z.number().int().positive() });
export type VideoDeadlineInput = z.infer<typeof VideoDeadlineInput>;

/** An activity that answers nothing (its result is `undefined`). */
const NoResult = z.void();

/** One activity's contract: the schema of its one argument and of its result. */
export type ActivitySchema = { input: z.ZodType; output: z.ZodType };
export type ActivitySchemas = Record<string, ActivitySchema>;
/** The activity functions a set of schemas describes: each takes its parsed input and answers its result. */
export type ActivitiesOf<S extends ActivitySchemas> = { [K in keyof S]: (input: z.infer<S[K]['input']>) => Promise<z.infer<S[K]['output']>> };

/** The control-plane activities the workflows call, served on TASK_QUEUES.control; implemented in control-plane. */
export const controlActivitySchemas = {
  beginRender: { input: RenderVideoInput, output: RenderPlan },
  prepareAudio: { input: PrepareAudioInput, output: PreparedAudio },
  recordProgress: { input: RecordProgressInput, output: NoResult },
  /** Moves the video to a later render stage, timed from now; a no-op for a stage it reached already. */
  recordStage: { input: RecordStageInput, output: NoResult },
  completeVideo: { input: CompleteVideoInput, output: NoResult },
  failVideo: { input: FailVideoInput, output: NoResult },
  beginRerender: { input: RerenderInput, output: RenderPlan },
  abandonRerender: { input: FailVideoInput, output: NoResult },
  deleteVideoObjects: { input: DeleteVideoObjectsInput, output: NoResult },
  beginTemplatePreview: { input: TemplatePreviewInput, output: TemplatePreviewPlan },
  completeTemplatePreview: { input: CompleteTemplatePreviewInput, output: NoResult },
  /** Queues the month's "free credits renewed" email for every opted-in user; idempotent per user and month. */
  enqueueFreeCreditsEmails: { input: FreeCreditsEmailsInput, output: FreeCreditsEmailsResult },
  /** Starts or settles every paid video without a running render; idempotent, so overlapping runs are harmless. */
  reconcileVideos: { input: ReconcileVideosInput, output: ReconcileVideosResult },
  /** Cancels the video (failed, code canceled, refunded) unless it completed; idempotent. */
  cancelVideoAtDeadline: { input: VideoDeadlineInput, output: NoResult },
  /**
   * Sends a webhook delivery once and records the attempt (idempotent per attempt number: a retried activity
   * sends the same webhook-id again, which receivers deduplicate). `last`: no attempt follows a failure.
   */
  attemptWebhookDelivery: { input: AttemptWebhookDeliveryInput, output: WebhookAttemptOutcome },
} satisfies ActivitySchemas;
export type ControlActivities = ActivitiesOf<typeof controlActivitySchemas>;

/** The render-node activities: renderLipSync on TASK_QUEUES.render, detectFace on TASK_QUEUES.detect. */
export const renderActivitySchemas = {
  renderLipSync: { input: RenderLipSyncInput, output: RenderLipSyncResult },
  /** Finds the pet's face on a stored photo; short, so a person can see it before paying. */
  detectFace: { input: DetectFaceInput, output: DetectFaceResult },
} satisfies ActivitySchemas;
export type RenderActivities = ActivitiesOf<typeof renderActivitySchemas>;
