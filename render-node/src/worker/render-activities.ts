import { createReadStream, createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURE_TYPES, MouthTrack, type DetectFaceInput, type DetectFaceResult, type RenderActivities, type RenderLipSyncInput } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/platform/storage';
import { createScratchDirectory, withScratchDirectory } from '@petsing/platform/tools';
import { RENDER_RECORD_FILE, RENDER_SCRATCH, renderRecordJson } from '../scratch.ts';
import { isRenderError, RenderError } from '../errors.ts';
import type { LipSyncModel } from '../lipsync-model.ts';
import { withFields, type Logger } from '../logger.ts';
import { defaultFit } from '../framing.ts';
import { detectInPhoto, faceToFractions, type FaceDetector } from '../pet-face.ts';
import { renderVideo } from '../render-pipeline.ts';
import type { RenderDevice, RenderNodeMetrics } from './render-metrics.ts';

/** How often a render heartbeats even when no frame finished (decoding, uploading). */
const HEARTBEAT_INTERVAL_MS = 5_000;
/** Progress is signalled to the workflow in steps of this many percent. */
const PROGRESS_SIGNAL_STEP = 5;

export type RenderActivityDependencies = {
  objects: ObjectStore;
  /** A learned lip-sync model (RENDER_MODEL_PATH); absent: the face rig renders. */
  model?: LipSyncModel;
  /** Output width; the height follows each video's aspect. */
  width: number;
  /** Face-rig worker threads (RENDER_RIG_THREADS); unset: the default for this machine. */
  rigThreads?: number;
  fps: number;
  logger: Logger;
  /** Tells the workflow how far the render is (best effort; a lost signal only delays the next one). */
  signalProgress(workflowId: string, percent: number): Promise<void>;
  /** Tells the workflow this node took its render, so the video shows `rendering` rather than `queued` (best effort). */
  signalStarted(workflowId: string): Promise<void>;
  /** The face detector: the bundled pet-face model, or a custom one (RENDER_DETECTOR_MODEL_PATH). Loaded once per process. */
  detector: FaceDetector;
  metrics: RenderNodeMetrics;
  /** Where frames are drawn (the lip-sync model's provider; the face rig draws on the CPU) and where photos are checked. */
  devices: { render: RenderDevice; detect: RenderDevice };
};

/**
 * The render node's activity: download the inputs, render, upload the outputs. It heartbeats, so a node
 * that dies is noticed and the render retried elsewhere; on cancellation the pipeline aborts and the
 * temporary files go.
 */
export function createRenderActivities(deps: RenderActivityDependencies): RenderActivities {
  return {
    async renderLipSync(input: RenderLipSyncInput) {
      const context = Context.current();
      const directory = await createScratchDirectory(RENDER_SCRATCH.render);
      let progress = 0;
      let signalled = 0;
      /** A Temporal that cannot be reached fails every progress signal of the render (20 of them): the first says so. */
      let progressSignalFailed = false;
      const heartbeat = setInterval(() => context.heartbeat({ progress }), HEARTBEAT_INTERVAL_MS);
      try {
        context.heartbeat({ progress });
        // If this node dies mid-render, the node started after it hands the render back with this (startScratchSweep).
        await writeFile(join(directory, RENDER_RECORD_FILE), renderRecordJson({ taskToken: context.info.taskToken, videoId: input.jobId, workflowId: input.workflowId }), { mode: 0o600 });
        deps.signalStarted(input.workflowId).catch((error: unknown) => {
          deps.logger.warn('could not signal that the render started', { videoId: input.jobId, workflowId: input.workflowId, error: String(error) });
        });
        const imagePath = join(directory, 'image');
        const audioPath = join(directory, 'audio.wav');
        const soundtrackPath = input.deliveryAudioKey ? join(directory, 'soundtrack.m4a') : undefined;
        const outputPath = join(directory, 'output.mp4');
        const thumbnailPath = join(directory, 'thumbnail.jpg');
        await download(deps.objects, input.imageKey, imagePath);
        await download(deps.objects, input.audioKey, audioPath);
        // A render planned before soundtracks were prepared has none: the analysis copy is encoded instead.
        if (input.deliveryAudioKey && soundtrackPath) await download(deps.objects, input.deliveryAudioKey, soundtrackPath);
        const mouthTrack = input.mouthTrackKey ? await readMouthTrack(deps.objects, input.mouthTrackKey) : undefined;
        const { vocalsPath, accompanimentPath } = await downloadStems(deps.objects, input, directory, audioPath);

        const renderStarted = performance.now();
        const result = await renderVideo({
          ...(deps.model ? { model: deps.model } : {}),
          imagePath,
          audioPath,
          ...(soundtrackPath ? { soundtrackPath } : {}),
          outputPath,
          thumbnailPath,
          watermark: input.watermark,
          ...(input.face ? { faceHints: input.face } : {}),
          ...(input.photoCheck ? { photoCheck: input.photoCheck } : {}),
          ...(input.aspect ? { aspect: input.aspect } : {}),
          ...(mouthTrack ? { mouthTrack } : {}),
          ...(vocalsPath ? { vocalsPath } : {}),
          ...(accompanimentPath ? { accompanimentPath } : {}),
          width: Math.min(deps.width, input.atMost?.width ?? deps.width),
          ...(deps.rigThreads === undefined ? {} : { rigThreads: deps.rigThreads }),
          fps: Math.min(deps.fps, input.atMost?.fps ?? deps.fps),
          signal: context.cancellationSignal,
          // Every line of the render ("render finished" included) names the video and its workflow.
          logger: withFields(deps.logger, { videoId: input.jobId, workflowId: input.workflowId }),
          detector: deps.detector,
          onProgress: (percent) => {
            progress = Math.floor(percent);
            context.heartbeat({ progress });
            if (progress >= signalled + PROGRESS_SIGNAL_STEP) {
              signalled = progress;
              deps.signalProgress(input.workflowId, progress).catch((error: unknown) => {
                if (progressSignalFailed) return;
                progressSignalFailed = true;
                deps.logger.warn('could not signal render progress; later failures of this render are not logged', { videoId: input.jobId, workflowId: input.workflowId, error: String(error) });
              });
            }
          },
        });

        const renderSeconds = (performance.now() - renderStarted) / 1000;
        const uploadStarted = performance.now();
        await deps.objects.put(input.outputKey, createReadStream(outputPath), { contentType: 'video/mp4' });
        await deps.objects.put(input.thumbnailKey, createReadStream(thumbnailPath), { contentType: 'image/jpeg' });
        // The render's time splits into waiting on ffmpeg (encode) and everything else up to the last frame (frames:
        // decoding, finding the face, drawing); docs/metrics.md.
        const encodeSeconds = result.stageTimings.encode / 1000;
        deps.metrics.stage('frames', deps.devices.render, Math.max(0, renderSeconds - encodeSeconds));
        deps.metrics.stage('encode', deps.devices.render, encodeSeconds);
        deps.metrics.stage('upload', deps.devices.render, (performance.now() - uploadStarted) / 1000);
        if (renderSeconds > 0) deps.metrics.rendered(deps.devices.render, result.frames / renderSeconds);
        return {
          outputKey: input.outputKey,
          thumbnailKey: input.thumbnailKey,
          durationSeconds: result.durationSeconds,
          frames: result.frames,
          face: result.faceOrigin,
          ...(result.sync ? { sync: result.sync } : {}),
          framing: result.fit,
        };
      } catch (error) {
        // Aborted by a cancellation: report it as one (the SDK's CancelledFailure), not as a failed render.
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
        throw toActivityFailure(error, deps.logger);
      } finally {
        clearInterval(heartbeat);
        await rm(directory, { recursive: true, force: true });
      }
    },

    async detectFace(input: DetectFaceInput): Promise<DetectFaceResult> {
      return withScratchDirectory(RENDER_SCRATCH.detect, async (directory) => {
        try {
          const started = performance.now();
          const imagePath = join(directory, 'image');
          await download(deps.objects, input.imageKey, imagePath);
          const { width, height, face } = await detectInPhoto(imagePath, deps.detector);
          deps.metrics.stage('photo_check', deps.devices.detect, (performance.now() - started) / 1000);
          const found = face ? { ...faceToFractions(face, width, height), framing: defaultFit(width, height, face) } : null;
          // The version travels with the face, so a render uses this face only on the same model (else it detects again, recorded).
          return { width, height, face: found, model: deps.detector.version };
        } catch (error) {
          throw toActivityFailure(error, deps.logger);
        }
      });
    },
  };
}

/**
 * Permanent render errors (bad input) become non-retryable failures carrying their code and hint. The message
 * travels to the client; what the decoder said (`detail`) is logged here and goes no further.
 */
function toActivityFailure(error: unknown, logger: Logger): unknown {
  if (isRenderError(error) && error.detail) logger.warn('input refused', { code: error.code, detail: error.detail });
  if (isRenderError(error) && error.permanent) {
    return ApplicationFailure.create({
      message: error.message,
      type: FAILURE_TYPES.permanent,
      nonRetryable: true,
      details: [{ code: error.code, hint: error.hint }],
    });
  }
  return error;
}

/** A template's mouth keyframes, checked against the contract (a broken file fails the render, not silently). */
async function readMouthTrack(objects: ObjectStore, key: string): Promise<MouthTrack> {
  const object = await objects.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(Buffer.from(chunk as Uint8Array));
  try {
    return MouthTrack.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  } catch (error) {
    throw new RenderError('mouth_track_invalid', `the song's mouth keyframes (${key}) are not a valid mouth track: ${(error as Error).message}`, 'Re-seed the templates (they are rebuilt when their files are missing).', { cause: error });
  }
}

/**
 * The audio's stems, when it has them: the mouth follows the voice alone, the head the band. Text-to-speech's vocal
 * stem is the analysis copy itself (`audioPath`, not downloaded again), and it has no accompaniment.
 */
async function downloadStems(objects: ObjectStore, input: RenderLipSyncInput, directory: string, audioPath: string): Promise<{ vocalsPath?: string; accompanimentPath?: string }> {
  const { stems } = input;
  if (!stems) return {};
  let vocalsPath = audioPath;
  if (stems.vocalKey !== input.audioKey) {
    vocalsPath = join(directory, 'vocals.wav');
    await download(objects, stems.vocalKey, vocalsPath);
  }
  if (!stems.accompanimentKey) return { vocalsPath };
  const accompanimentPath = join(directory, 'accompaniment.wav');
  await download(objects, stems.accompanimentKey, accompanimentPath);
  return { vocalsPath, accompanimentPath };
}

async function download(objects: ObjectStore, key: string, path: string): Promise<void> {
  const object = await objects.get(key);
  await pipeline(object.body, createWriteStream(path));
}
