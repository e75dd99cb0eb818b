import { rm } from 'node:fs/promises';
import { createWriteStream, type WriteStream } from 'node:fs';
import sharp from 'sharp';
import { decodeAudio, type DecodedAudio } from './audio-decoder.ts';
import { FrameCompositor, type BlendMode } from './compositor.ts';
import { RenderError } from './errors.ts';
import { buildFaceInput, cropBoxFor, type CropBox } from './face-crop.ts';
import { FfmpegEncoder } from './ffmpeg-encoder.ts';
import { cropSquare, decodeImage, type RgbImage } from './image-decoder.ts';
import type { LipSyncModel } from './lipsync-model.ts';
import { silentLogger, type Logger } from './logger.ts';
import { copyMelWindow, melSpectrogram, type MelSpectrogram } from './mel-features.ts';
import { MEL_BANDS, MEL_WINDOW } from './model-contract.ts';
import type { FaceHints } from '@petsing/workflows';
import { classicalFaceDetector } from './face-detector.ts';
import type { MouthRegion } from './mouth-region.ts';
import { applyHints, DetectionFailure, faceLength, mapFace, type FaceDetector, type PetFace } from './pet-face.ts';
import { createWatermark } from './watermark.ts';

export interface RenderVideoOptions {
  model: LipSyncModel;
  imagePath: string;
  audioPath: string;
  outputPath: string;
  thumbnailPath: string;
  watermark: boolean;
  /** Square output side in pixels, even, at most 720. Default 512. */
  size?: number;
  fps?: number;
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
  logger?: Logger;
  /** Default: the classical detector (README, "Detector"). */
  detector?: FaceDetector;
  /** The person's corrections (fractions of the photo after EXIF orientation); their mouth point is used as given. */
  faceHints?: FaceHints;
  /** How generated crops are blended in (see compositor.ts); default 'residual'. */
  blend?: BlendMode;
  /** Breathing and head sway; on by default. */
  idleMotion?: boolean;
  /** x264 preset, default veryfast. */
  preset?: string;
  /** Benchmarks only: also write the raw RGB frames here, to time the encoder alone on the same frames. */
  rawFramesPath?: string;
}

/** Milliseconds per stage. Inference, composite and encode overlap, so they add up to more than the wall time. */
export interface StageTimings {
  decode: number;
  features: number;
  detect: number;
  inference: number;
  composite: number;
  /** Time the renderer waited on ffmpeg (pipe backpressure plus the final flush). */
  encode: number;
  total: number;
}

export interface RenderResult {
  durationSeconds: number;
  frames: number;
  fps: number;
  size: number;
  stageTimings: StageTimings;
  mouth: MouthRegion;
  crop: CropBox;
  /** The landmarks used, in pixels of the photo after EXIF orientation. */
  face: PetFace;
  /** The part of the photo shown in the output, in the same pixels. */
  framing: { left: number; top: number; width: number; height: number };
}

const FRAME_POOL = 4;

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RenderError('aborted', 'the render was cancelled', 'The job was cancelled; nothing to fix.', { permanent: false });
}

function faceNotFound(reason: string): RenderError {
  return new RenderError(
    'face_not_found',
    `no usable pet face found: ${reason}`,
    'Pets are the hard case for lip-sync: use a well-lit photo with one pet facing the camera, its muzzle visible, on a plain or blurred background.',
  );
}

/** The face to animate, in pixels of `image`: the detector's, corrected by the person's hints. */
async function locateFace(image: RgbImage, detector: FaceDetector, hints: FaceHints | undefined): Promise<PetFace> {
  const found = await detector.detect(image);
  const detected = found instanceof DetectionFailure ? null : found;
  if (hints) return applyHints(detected, hints, image.width, image.height);
  if (!detected) throw faceNotFound(`${(found as DetectionFailure).reason} (${detector.name} detector)`);
  return detected;
}

/** What the compositor needs: where the mouth hangs from and how wide the face is. */
function mouthRegionOf(face: PetFace): MouthRegion {
  const eyeDistance = Math.hypot(face.eyes[1][0] - face.eyes[0][0], face.eyes[1][1] - face.eyes[0][1]);
  const length = faceLength(face);
  return {
    centreX: face.mouth[0],
    upperLipY: face.mouth[1],
    faceWidth: Math.max(eyeDistance * 2, length * 1.6),
    subject: face.head,
    confidence: face.confidence,
    method: face.method,
  };
}

/** A square around the pet's head (about 2.2 face widths), so a small or off-centre pet fills the frame. */
function framingBox(image: RgbImage, mouth: MouthRegion): { left: number; top: number; side: number } {
  const limit = Math.min(image.width, image.height);
  const side = Math.max(1, Math.floor(Math.min(limit, Math.max(mouth.faceWidth * 2.2, limit * 0.25))));
  const left = Math.round(Math.min(image.width - side, Math.max(0, mouth.centreX - side / 2)));
  const top = Math.round(Math.min(image.height - side, Math.max(0, mouth.upperLipY - side * 0.55)));
  return { left, top, side };
}

export interface PreparedJob {
  frame: RgbImage;
  mouth: MouthRegion;
  crop: CropBox;
  face: PetFace;
  framing: RenderResult['framing'];
  audio: DecodedAudio;
  mel: MelSpectrogram;
  timings: Pick<StageTimings, 'decode' | 'features' | 'detect'>;
}

/** Everything that happens once per job, before frames flow: decoding, features, detection, framing. */
export async function prepareJob(options: Pick<RenderVideoOptions, 'imagePath' | 'audioPath' | 'size' | 'detector' | 'faceHints' | 'signal'>): Promise<PreparedJob> {
  const size = options.size ?? 512;
  let mark = performance.now();
  const [image, audio] = await Promise.all([decodeImage(options.imagePath), decodeAudio(options.audioPath, options.signal)]);
  const decode = performance.now() - mark;
  throwIfAborted(options.signal);

  mark = performance.now();
  const mel = melSpectrogram(audio.samples);
  const features = performance.now() - mark;

  mark = performance.now();
  const face = await locateFace(image, options.detector ?? classicalFaceDetector, options.faceHints);
  const framing = framingBox(image, mouthRegionOf(face));
  const frame = await cropSquare(image, framing, size);
  const scale = size / framing.side;
  const mouth = mouthRegionOf(mapFace(face, (x, y) => [(x - framing.left) * scale, (y - framing.top) * scale], scale));
  const crop = cropBoxFor(mouth, frame.width, frame.height);
  const detect = performance.now() - mark;
  // Reported in the photo's own pixels (after orientation), as the CLI and the API speak them.
  const toSource = image.orientedWidth / image.width;
  return {
    frame,
    mouth,
    crop,
    face: mapFace(face, (x, y) => [x * toSource, y * toSource], toSource),
    framing: { left: framing.left * toSource, top: framing.top * toSource, width: framing.side * toSource, height: framing.side * toSource },
    audio,
    mel,
    timings: { decode, features, detect },
  };
}

/** Renders the lip-synced video and its thumbnail; removes partial outputs on failure or abort. */
export async function renderVideo(options: RenderVideoOptions): Promise<RenderResult> {
  const started = performance.now();
  const { model, signal } = options;
  const logger = options.logger ?? silentLogger;
  const size = options.size ?? 512;
  const fps = options.fps ?? 25;
  if (size % 2 !== 0 || size < 64 || size > 720) throw new RangeError(`size must be even and within 64..720, got ${size}`);
  throwIfAborted(signal);

  const job = await prepareJob(options).catch((error: unknown) => {
    // ffmpeg killed by the signal surfaces as a plain AbortError; report it like any other cancellation.
    throwIfAborted(signal);
    throw error;
  });
  const { frame, crop, mel, audio } = job;
  const frames = Math.ceil(audio.durationSeconds * fps - 1e-9);
  logger.info('render job prepared', { frames, durationSeconds: audio.durationSeconds, crop, mouthConfidence: job.mouth.confidence });

  const faceSize = model.faceSize;
  const batch = model.batchSize;
  const faceInput = await buildFaceInput(frame, crop, faceSize);
  const faceBatch = new Float32Array(batch * faceInput.length);
  for (let n = 0; n < batch; n++) faceBatch.set(faceInput, n * faceInput.length);
  const compositor = new FrameCompositor({
    frame,
    crop,
    faceSize,
    fps,
    faceInput,
    blend: options.blend,
    idleMotion: options.idleMotion ?? true,
    overlay: options.watermark ? await createWatermark(frame.width, frame.height) : undefined,
  });

  const timings: StageTimings = { ...job.timings, inference: 0, composite: 0, encode: 0, total: 0 };
  const encoder = new FfmpegEncoder({ width: frame.width, height: frame.height, fps, audioPath: options.audioPath, outputPath: options.outputPath, preset: options.preset });
  const rawFrames: WriteStream | undefined = options.rawFramesPath ? createWriteStream(options.rawFramesPath) : undefined;
  const thumbnailIndex = Math.min(frames - 1, Math.floor(frames / 3));
  let thumbnail: Promise<unknown> | undefined;
  const batches = Math.ceil(frames / batch);

  const infer = async (batchIndex: number): Promise<Float32Array> => {
    const audioBatch = new Float32Array(batch * MEL_BANDS * MEL_WINDOW);
    for (let n = 0; n < batch; n++) {
      // The last batch is padded by repeating its final frame; padded outputs are dropped.
      const frameIndex = Math.min(frames - 1, batchIndex * batch + n);
      copyMelWindow(mel, frameIndex, fps, audioBatch, n * MEL_BANDS * MEL_WINDOW);
    }
    const mark = performance.now();
    const output = await model.run(audioBatch, faceBatch);
    timings.inference += performance.now() - mark;
    return output;
  };

  const pool = Array.from({ length: FRAME_POOL }, () => ({ buffer: Buffer.allocUnsafe(compositor.frameBytes), flushed: Promise.resolve() }));
  let lastPercent = -1;
  let pending: Promise<Float32Array> | undefined;
  try {
    pending = infer(0);
    // The next batch's inference is promised before this batch is composited: onnxruntime runs it on
    // its own threads while this thread composites and ffmpeg encodes in its own process.
    for (let b = 0; b < batches; b++) {
      const generated = await pending;
      if (b + 1 < batches) pending = infer(b + 1);
      const plane = 3 * faceSize * faceSize;
      for (let n = 0; n < batch; n++) {
        const index = b * batch + n;
        if (index >= frames) break;
        throwIfAborted(signal);
        const slot = pool[index % FRAME_POOL]!;
        let mark = performance.now();
        await slot.flushed; // the pipe may still hold this buffer
        timings.encode += performance.now() - mark;
        mark = performance.now();
        compositor.composeFrame(index, generated, n * plane, slot.buffer);
        timings.composite += performance.now() - mark;
        if (index === thumbnailIndex) {
          thumbnail = sharp(Buffer.from(slot.buffer), { raw: { width: frame.width, height: frame.height, channels: 3 } })
            .jpeg({ quality: 85, mozjpeg: true })
            .toFile(options.thumbnailPath);
        }
        const flushed = encoder.write(slot.buffer);
        // A failed write is reported by the next wait on this slot or by finish().
        flushed.catch(() => undefined);
        slot.flushed = flushed;
        if (rawFrames && !rawFrames.write(Buffer.from(slot.buffer))) await new Promise<void>((resolve) => rawFrames.once('drain', () => resolve()));
      }
      const percent = Math.floor((Math.min(frames, (b + 1) * batch) / frames) * 99);
      if (percent !== lastPercent) {
        lastPercent = percent;
        options.onProgress?.(percent);
      }
    }
    throwIfAborted(signal);
    const mark = performance.now();
    await Promise.all(pool.map((slot) => slot.flushed));
    await encoder.finish();
    if (rawFrames) await new Promise<void>((resolve, reject) => rawFrames.end((error?: Error | null) => (error ? reject(error) : resolve())));
    timings.encode += performance.now() - mark;
    await thumbnail;
  } catch (error) {
    pending?.catch(() => undefined);
    await encoder.kill();
    rawFrames?.destroy();
    await thumbnail?.catch(() => undefined);
    await Promise.all([options.outputPath, options.thumbnailPath, options.rawFramesPath].map((path) => (path ? rm(path, { force: true }) : undefined)));
    throw error;
  }
  timings.total = performance.now() - started;
  options.onProgress?.(100);
  logger.info('render finished', { frames, ms: Math.round(timings.total) });
  return { durationSeconds: audio.durationSeconds, frames, fps, size, stageTimings: timings, mouth: job.mouth, crop, face: job.face, framing: job.framing };
}
