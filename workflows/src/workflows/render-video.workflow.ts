import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  FAILURE_TYPES,
  preparedAudioKey,
  deliveryAudioKey,
  PROGRESS_QUERY,
  RENDER_PROGRESS_SIGNAL,
  RENDER_STARTED_SIGNAL,
  TASK_QUEUES,
  renderOutputKeys,
} from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import {
  controlActivitySchemas,
  renderActivitySchemas,
  RenderVideoInput,
  RerenderInput,
  TEMPLATE_PREVIEW_OUTPUT,
  TemplatePreviewInput,
  type FailVideoInput,
  type RenderOutcome,
  type RenderPlan,
} from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

// Both proxies parse each activity's result with its contract schema (proxyParsedActivities).
const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [FAILURE_TYPES.permanent, FAILURE_TYPES.videoGone],
  },
});

const render = proxyParsedActivities(renderActivitySchemas, {
  taskQueue: TASK_QUEUES.render,
  // Waiting in the queue for a free GPU is fine; once picked up, a silent node is presumed dead after the
  // heartbeat timeout and the render is retried on another node.
  scheduleToStartTimeout: '30 minutes',
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [FAILURE_TYPES.permanent],
  },
});

export const renderProgressSignal = defineSignal<[number]>(RENDER_PROGRESS_SIGNAL);
const renderStartedSignal = defineSignal(RENDER_STARTED_SIGNAL);
export const progressQuery = defineQuery<number>(PROGRESS_QUERY);

/** Progress is persisted in steps of this size, so a render adds only a handful of history events. */
const PROGRESS_STEP = 10;

/**
 * Patch: a cancelled run waits until the render node has stopped (the render activity's cancellation completed,
 * or it finished) before the caller removes the video's objects, so no output is written after the removal.
 * Runs recorded before it removed them at once.
 */
const AWAIT_RENDER_CANCELLATION_PATCH = 'await-render-cancellation';

/**
 * Patch: the video's render stage is recorded: `queued` when the render is scheduled, `rendering` when a render
 * node says it took it (or its first progress arrives). Runs recorded before recorded neither.
 */
const RENDER_STAGES_PATCH = 'render-stages';

/**
 * Renders one video: vet the inputs, prepare the audio, render on a render node, store the outputs,
 * finish. A failure moves the video to `failed` and compensates (refund) exactly once; a cancellation
 * (the video was deleted) stops the render and removes whatever it stored.
 */
export async function renderVideo(started: RenderVideoInput): Promise<RenderOutcome> {
  const input = parseContract(RenderVideoInput, started, 'The input of the workflow renderVideo');
  let plan: RenderPlan;
  try {
    plan = await control.beginRender(input);
  } catch (error) {
    if (failureType(error) === FAILURE_TYPES.videoGone) return { videoId: input.videoId, status: 'failed', failureCode: 'video_deleted' };
    return fail(input.videoId, error, control.failVideo);
  }
  try {
    await runPipeline(plan);
    return { videoId: input.videoId, status: 'completed' };
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() => control.deleteVideoObjects({ videoId: input.videoId, keepKeys: [] }));
      throw error;
    }
    return fail(input.videoId, error, control.failVideo);
  }
}

/** Attempts of the whole pipeline for a paid re-render before it gives up (and can be restarted). */
const RERENDER_ATTEMPTS = 3;

/**
 * The same pipeline with the watermark off, replacing the output; used by the one-time watermark purchase.
 * A paid purchase must not be lost to a transient failure, so the whole pipeline is retried with a durable
 * back-off; if it still fails, the video keeps its watermarked output and the re-render can be restarted.
 */
export async function rerenderWithoutWatermark(started: RerenderInput): Promise<RenderOutcome> {
  const input = parseContract(RerenderInput, started, 'The input of the workflow rerenderWithoutWatermark');
  let lastError: unknown;
  for (let attempt = 1; attempt <= RERENDER_ATTEMPTS; attempt++) {
    try {
      const plan = await control.beginRerender(input);
      await runPipeline(plan);
      return { videoId: input.videoId, status: 'completed' };
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (failureType(error) === FAILURE_TYPES.videoGone) return { videoId: input.videoId, status: 'failed', failureCode: 'video_deleted' };
      lastError = error;
      if (attempt < RERENDER_ATTEMPTS) await sleep(`${attempt * 30} seconds`);
    }
  }
  await fail(input.videoId, lastError, control.abandonRerender);
  throw ApplicationFailure.nonRetryable(`Re-render of ${input.videoId} failed ${RERENDER_ATTEMPTS} times`, 'RerenderFailed');
}

async function runPipeline(plan: RenderPlan): Promise<void> {
  let progress = 0;
  let recorded = 0;
  let rendering = true;
  let taken = false;
  let takenRecorded = false;
  setHandler(renderProgressSignal, (value) => {
    if (Number.isFinite(value)) progress = Math.max(progress, Math.min(99, Math.floor(value)));
  });
  setHandler(renderStartedSignal, () => {
    taken = true;
  });
  setHandler(progressQuery, () => progress);
  const recordsStages = patched(RENDER_STAGES_PATCH);
  // A lost start signal (they are sent best-effort) must not leave a render that makes progress `queued`.
  const stageToRecord = () => recordsStages && !takenRecorded && (taken || progress > 0);

  const audio = plan.preparedAudio ?? (await control.prepareAudio({
    sourceAudioKey: plan.sourceAudioKey,
    targetKey: preparedAudioKey(plan.videoId),
    deliveryKey: deliveryAudioKey(plan.videoId),
    ...(plan.cleanVoice ? { cleanVoice: true } : {}),
    // The creator's start in the audio; absent (and in plans from before), preparation picks the window.
    ...(plan.audioStartSeconds !== undefined ? { startSeconds: plan.audioStartSeconds } : {}),
  }));
  if (recordsStages) await control.recordStage({ videoId: plan.videoId, stage: 'queued' });
  const info = workflowInfo();
  const keys = renderOutputKeys(plan.videoId, info.runId);
  const rendered = render
    .renderLipSync({
      jobId: plan.videoId,
      workflowId: info.workflowId,
      imageKey: plan.imageKey,
      audioKey: audio.audioKey,
      // The soundtrack; audio prepared before it existed has none, and the render encodes the analysis copy.
      ...(audio.deliveryAudioKey ? { deliveryAudioKey: audio.deliveryAudioKey } : {}),
      watermark: plan.watermark,
      outputKey: keys.output,
      thumbnailKey: keys.thumbnail,
      ...(plan.face ? { face: plan.face } : {}),
      // The video's shape; plans started before shapes existed have none, and the render then makes a square.
      ...(plan.aspect ? { aspect: plan.aspect } : {}),
      // Template songs: the mouth follows their score's keyframes.
      ...(plan.mouthTrackKey ? { mouthTrackKey: plan.mouthTrackKey } : {}),
      // The face the owner was shown; plans from before stored faces have none, and the render finds it.
      ...(plan.photoCheck ? { photoCheck: plan.photoCheck } : {}),
      // The vocal and accompaniment stems; audio prepared before stems (and template songs) has none.
      ...(audio.stems ? { stems: audio.stems } : {}),
    })
    .finally(() => (rendering = false));
  // A cancellation leaves the loop below before the render settles; its rejection must not go unhandled,
  // which would fail every workflow task of the cancelled run.
  rendered.catch(() => {});

  let result: Awaited<typeof rendered>;
  try {
    while (rendering) {
      await condition(() => !rendering || stageToRecord() || progress >= recorded + PROGRESS_STEP);
      if (!rendering) break;
      if (stageToRecord()) {
        takenRecorded = true;
        await control.recordStage({ videoId: plan.videoId, stage: 'rendering' });
      } else {
        recorded = progress;
        await control.recordProgress({ videoId: plan.videoId, progress: recorded });
      }
    }
    result = await rendered;
  } catch (error) {
    if (isCancellation(error) && patched(AWAIT_RENDER_CANCELLATION_PATCH)) await rendered.catch(() => {});
    throw error;
  }
  await control.completeVideo({
    videoId: plan.videoId,
    outputKey: result.outputKey,
    thumbnailKey: result.thumbnailKey,
    watermark: plan.watermark,
    // Where the render's face came from (a render node older than the field says nothing).
    ...(result.face ? { face: result.face } : {}),
    // The sync report and the window of the source it sang (a render node older than the report says nothing).
    ...(result.sync ? { sync: { ...result.sync, audioStartSeconds: audio.startSeconds ?? 0, audioDurationSeconds: audio.durationSeconds } } : {}),
  });
}

/**
 * Renders a template's preview clip once: its song sung by the project's own sample pet, without a
 * watermark, stored beside the template.
 */
export async function renderTemplatePreview(started: TemplatePreviewInput): Promise<void> {
  const input = parseContract(TemplatePreviewInput, started, 'The input of the workflow renderTemplatePreview');
  const plan = await control.beginTemplatePreview(input);
  const result = await render.renderLipSync({
    jobId: `template-${input.templateId}`,
    workflowId: workflowInfo().workflowId,
    imageKey: plan.imageKey,
    audioKey: plan.preparedAudio.audioKey,
    ...(plan.preparedAudio.deliveryAudioKey ? { deliveryAudioKey: plan.preparedAudio.deliveryAudioKey } : {}),
    watermark: false,
    outputKey: plan.outputKey,
    thumbnailKey: plan.thumbnailKey,
    ...(plan.face ? { face: plan.face } : {}),
    ...(plan.mouthTrackKey ? { mouthTrackKey: plan.mouthTrackKey } : {}),
    atMost: TEMPLATE_PREVIEW_OUTPUT,
  });
  await control.completeTemplatePreview({ templateId: input.templateId, outputKey: result.outputKey });
}

async function fail(
  videoId: string,
  error: unknown,
  record: (input: FailVideoInput) => Promise<void>,
): Promise<RenderOutcome> {
  const { code, reason } = describeFailure(error);
  await record({ videoId, code, reason });
  return { videoId, status: 'failed', failureCode: code };
}

function failureType(error: unknown): string | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/**
 * A permanent failure carries `{ code }` in its details; a value that broke the contract failed at once; anything
 * else failed after all its retries.
 */
function describeFailure(error: unknown): { code: string; reason: string } {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.permanent) {
    const details = cause.details?.[0] as { code?: unknown } | undefined;
    return { code: typeof details?.code === 'string' ? details.code : 'render_failed', reason: cause.message };
  }
  if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.contract) return { code: 'render_failed', reason: `The render failed: ${cause.message}` };
  const message = cause instanceof Error ? cause.message : 'The render failed.';
  return { code: 'render_failed', reason: `The render failed after several attempts: ${message}` };
}
