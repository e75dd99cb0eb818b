import { rm } from 'node:fs/promises';
import { createWriteStream, type WriteStream } from 'node:fs';
import sharp from 'sharp';
import { DEFAULT_VIDEO_ASPECT, type FaceHints, type MouthTrack, type PhotoCheck, type RenderedFace, type RenderSync, type VideoAspect } from '@petsing/workflows';
import { MAX_OUTPUT_SIZE } from './config.ts';
import { decodeAudio, decodeStem, type DecodedAudio } from './audio-decoder.ts';
import { FrameCompositor, type BlendMode } from './compositor.ts';
import { RenderError } from './errors.ts';
import { buildFaceInput, cropBoxFor } from './face-crop.ts';
import { bundledPetFaceModel } from './pet-face-model.ts';
import { FaceRig, type RigPose } from './face-rig.ts';
import { defaultRigThreads, RigPool, sharedFrameBuffer } from './rig-pool.ts';
import { FfmpegEncoder } from './ffmpeg-encoder.ts';
import { DEFAULT_OUTPUT_WIDTH, frameFace, type FaceFit } from './framing.ts';
import { decodeImage, type RgbImage } from './image-decoder.ts';
import type { LipSyncModel } from './lipsync-model.ts';
import { silentLogger, type Logger } from './logger.ts';
import { copyMelWindow, melSpectrogram } from './mel-features.ts';
import { MEL_BANDS, MEL_WINDOW } from './model-contract.ts';
import type { MouthRegion } from './mouth-region.ts';
import { applyHints, DetectionFailure, eyeDistance, faceFromFractions, faceLength, mapFace, type FaceDetector, type PetFace, type Point } from './pet-face.ts';
import { idlePoses } from './idle-life.ts';
import { performedPoses } from './head-performance.ts';
import { BLINK_EVERY, mouthKindOf } from './species-rig.ts';
import { driveFromSong } from './song-drive.ts';
import { createWatermark } from './watermark.ts';
import { cutOut } from './photo-fill.ts';


export interface RenderVideoOptions {
  /** A learned lip-sync model (the Wav2Lip contract, RENDER_MODEL_PATH); absent: the face rig animates the photo itself. */
  model?: LipSyncModel;
  imagePath: string;
  /** The analysis copy of the audio: the mouth follows it when there is no `vocalsPath`; also the soundtrack where there is no `soundtrackPath`. */
  audioPath: string;
  /** The vocal stem (mono, as long as `audioPath`): the mouth follows it, and rests where it holds no voice. */
  vocalsPath?: string;
  /** The accompaniment stem: its beats drive the head (README, "The band drives the body"). */
  accompanimentPath?: string;
  /** The video's prepared soundtrack (AAC in M4A), copied into the MP4 as it is. */
  soundtrackPath?: string;
  outputPath: string;
  thumbnailPath: string;
  watermark: boolean;
  /** Output width in pixels (even); the height follows the aspect. Default 720; a small photo gives less (never enlarged beyond 2×). */
  width?: number;
  aspect?: VideoAspect;
  fps?: number;
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
  logger?: Logger;
  /** Default: the bundled pet-face model (README, "Detector"). */
  detector?: FaceDetector;
  /** The person's corrections (fractions of the photo after EXIF orientation); their mouth point is used as given. */
  faceHints?: FaceHints;
  /**
   * The photo check's face, shown to the owner: used as it is (the hints over it) when `detector` has the version
   * that found it, so the render does not detect again. Absent, or from another version: the render finds the face.
   */
  photoCheck?: PhotoCheck;
  /** How a learned model's crops are blended in (see compositor.ts); default 'residual'. */
  blend?: BlendMode;
  /** The song's mouth motion known in advance (template songs): the face rig follows it instead of the voice. */
  mouthTrack?: MouthTrack;
  /** Worker threads drawing the face rig's frames; 0 draws on the render loop's thread. Default: defaultRigThreads(). */
  rigThreads?: number;
  /** Blinks and head motion (the face rig); on by default. */
  idleMotion?: boolean;
  /** x264 preset, default veryfast. */
  preset?: string;
  /** Benchmarks only: also write the raw RGB frames here, to time the encoder alone on the same frames. */
  rawFramesPath?: string;
}

/** Milliseconds per stage. Synthesis and encoding overlap, so they add up to more than the wall time. */
export interface StageTimings {
  decode: number;
  /** Audio analysis: the voice track (face rig) or the mel spectrogram (learned model). */
  features: number;
  detect: number;
  /** Learned model only: onnxruntime. */
  inference: number;
  /** Drawing frames: the face rig (on its threads: from request to finished frame), or blending a model's crops. */
  composite: number;
  /** Time the render loop waited for the next frame to be drawn and taken by ffmpeg, plus the final flush. */
  encode: number;
  total: number;
}

export interface RenderResult {
  durationSeconds: number;
  frames: number;
  fps: number;
  width: number;
  height: number;
  renderer: 'face-rig' | 'model';
  stageTimings: StageTimings;
  /** The landmarks used, in pixels of the photo after EXIF orientation. */
  face: PetFace;
  /** The part of the photo shown in the output, in the same pixels. */
  framing: { left: number; top: number; width: number; height: number };
  /** Whether the head fills the frame, or the pet is too small in the photo to (framing.ts). */
  fit: FaceFit;
  /** Where the face came from: the photo check, the person, or a detection at the render (and why). */
  faceOrigin: RenderedFace;
  /** How the mouth followed the singing (the face rig; a learned model's mouth is not measured). */
  sync?: RenderSync;
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

/** A given mouth this close to the found one (in face lengths) is the same face: the found landmarks stand. */
const HINT_AGREES = 0.25;

/** The face to animate, in pixels of the image it was located on, and where it came from. */
interface LocatedFace {
  face: PetFace;
  origin: RenderedFace;
}

/**
 * The face to animate, in pixels of `image`: the photo check's when the detector is the one that found it (the
 * face the owner was shown), else the detector's own; in both cases corrected by the person's hints.
 */
async function locateFace(image: RgbImage, loadDetector: () => Promise<FaceDetector>, hints: FaceHints | undefined, check: PhotoCheck | undefined): Promise<LocatedFace> {
  // Every landmark given: nothing for a detector to add.
  if (hints?.eyes && hints.nose && hints.chin) return { face: applyHints(null, hints, image.width, image.height), origin: { source: 'given' } };
  const detector = await loadDetector();
  const stored = check?.model === detector.version ? check : undefined;
  const origin: RenderedFace = { source: stored ? 'photo_check' : check ? 'render_model_changed' : 'render_no_check', model: detector.version };
  let detected: PetFace | null;
  let missing: string;
  if (stored) {
    detected = stored.face && faceFromFractions(stored.face, image.width, image.height, `${detector.name} (the photo check's face)`);
    missing = `the photo check found none (${detector.name} detector)`;
  } else {
    const found = await detector.detect(image);
    detected = found instanceof DetectionFailure ? null : found;
    missing = found instanceof DetectionFailure ? `${found.reason} (${detector.name} detector)` : '';
  }
  if (hints) {
    const mouth: Point = [hints.mouth.x * image.width, hints.mouth.y * image.height];
    // The model looks again around the given mouth unless the face found already has its mouth there.
    const near = detected && Math.hypot(detected.mouth[0] - mouth[0], detected.mouth[1] - mouth[1]) <= HINT_AGREES * faceLength(detected);
    const around = near || !detector.detectAround ? detected : await detector.detectAround(image, mouth, detected);
    return { face: applyHints(around, hints, image.width, image.height), origin };
  }
  if (!detected) throw faceNotFound(missing);
  return { face: detected, origin };
}

/** What a learned model's compositor needs: where the mouth hangs from and how wide the face is. */
function mouthRegionOf(face: PetFace): MouthRegion {
  return {
    centreX: face.mouth[0],
    upperLipY: face.mouth[1],
    faceWidth: Math.max(eyeDistance(face) * 2, faceLength(face) * 1.6),
    subject: face.head,
    confidence: face.confidence,
    method: face.method,
  };
}

export interface PreparedJob {
  /** The still output frame (the framed photo at output size). */
  frame: RgbImage;
  /** The face in output-frame pixels. */
  frameFace: PetFace;
  /** The face in the photo's own pixels (after orientation), as the CLI and the API speak them. */
  face: PetFace;
  framing: RenderResult['framing'];
  fit: FaceFit;
  faceOrigin: RenderedFace;
  audio: DecodedAudio;
  /** The stems, when the render was given them. */
  vocals?: DecodedAudio;
  accompaniment?: DecodedAudio;
  timings: Pick<StageTimings, 'decode' | 'detect'>;
}

/** Everything that happens once per job before frames flow: decoding, detection, framing. */
export async function prepareJob(
  options: Pick<RenderVideoOptions, 'imagePath' | 'audioPath' | 'vocalsPath' | 'accompanimentPath' | 'width' | 'aspect' | 'detector' | 'faceHints' | 'photoCheck' | 'signal'>,
): Promise<PreparedJob> {
  let mark = performance.now();
  const stem = (path: string | undefined) => (path ? decodeStem(path, options.signal) : undefined);
  const [image, audio, vocals, accompaniment] = await Promise.all([
    decodeImage(options.imagePath),
    decodeAudio(options.audioPath, options.signal),
    stem(options.vocalsPath),
    stem(options.accompanimentPath),
  ]);
  const decode = performance.now() - mark;
  throwIfAborted(options.signal);

  mark = performance.now();
  // The bundled model is loaded only when a face has to be found (given points need none).
  const loadDetector = async () => options.detector ?? (await bundledPetFaceModel());
  const { face: found, origin } = await locateFace(image, loadDetector, options.faceHints, options.photoCheck);
  // The decoded image may be a downscaled working copy: frame in the photo's own pixels so the 2× rule speaks of the real photo.
  const toSource = image.orientedWidth / image.width;
  const face = mapFace(found, (x, y) => [x * toSource, y * toSource], toSource);
  const framing = frameFace(image.orientedWidth, image.orientedHeight, face, options.aspect ?? DEFAULT_VIDEO_ASPECT, options.width ?? DEFAULT_OUTPUT_WIDTH);
  const { crop } = framing;
  const box = {
    left: Math.round(crop.left / toSource),
    top: Math.round(crop.top / toSource),
    width: Math.max(1, Math.round(crop.width / toSource)),
    height: Math.max(1, Math.round(crop.height / toSource)),
  };
  const { data, info } = await sharp(await cutOut(image, box), { raw: { width: box.width, height: box.height, channels: 3 } })
    .resize(framing.width, framing.height, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const frame = { width: info.width, height: info.height, data };
  const sx = framing.width / box.width;
  const sy = framing.height / box.height;
  const frameFaceValue = mapFace(found, (x, y) => [(x - box.left) * sx, (y - box.top) * sy], (sx + sy) / 2);
  const detect = performance.now() - mark;
  return {
    frame,
    frameFace: frameFaceValue,
    face,
    framing: { ...crop },
    fit: framing.fit,
    faceOrigin: origin,
    audio,
    ...(vocals ? { vocals } : {}),
    ...(accompaniment ? { accompaniment } : {}),
    timings: { decode, detect },
  };
}

/** Writes frame `index` into `out`; frames are asked for in order. */
type FrameProducer = (index: number, out: Buffer) => Promise<void> | void;

interface Synthesis {
  /** Called in frame order, possibly before earlier frames are done (the loop draws ahead). */
  produce: FrameProducer;
  /** The frame shown as the thumbnail. */
  thumbnailIndex: number;
  featuresMs: number;
  /** The face rig's sync report. */
  sync?: RenderSync;
  /** Frame buffers the producer can draw into (shared memory for rig threads). */
  allocate(bytes: number): Buffer;
  close(): Promise<void>;
}

/**
 * The face rig: the voice (the vocal stem, else the analysis copy; or the song's keyframes) drives the jaw, idle life
 * adds blinks and head motion (on the band's beats when the accompaniment has them).
 */
async function rigSynthesis(job: PreparedJob, frames: number, fps: number, options: RenderVideoOptions, timings: StageTimings): Promise<Synthesis> {
  const mark = performance.now();
  const { voice, pitch, rhythm, sync } = driveFromSong(job, fps, frames, options.mouthTrack);
  const featuresMs = performance.now() - mark;
  const idleMotion = options.idleMotion ?? true;
  const blinkEvery = BLINK_EVERY[mouthKindOf(job.frameFace.species)];
  const life = idlePoses(voice, faceLength(job.frameFace), idleMotion, blinkEvery, rhythm);
  // Lids that blink also narrow on long loud notes, and their brows lift on high ones (a bird's lids are not drawn).
  const performed = performedPoses({ voice, life, pitch, faceLengthPixels: faceLength(job.frameFace), lids: blinkEvery !== null, enabled: idleMotion });
  const rigOptions = {
    frame: job.frame,
    face: job.frameFace,
    blinks: idleMotion && !job.frameFace.eyesEstimated,
    ...(options.watermark ? { overlay: await createWatermark(job.frame.width, job.frame.height) } : {}),
  };
  // The thumbnail shows the pet singing: the widest mouth in the first two thirds.
  let thumbnailIndex = Math.min(frames - 1, Math.floor(frames / 3));
  for (let f = 0; f < Math.ceil((frames * 2) / 3); f++) if (voice.open[f]! > voice.open[thumbnailIndex]! + 0.05) thumbnailIndex = f;
  const poseOf = (index: number): RigPose => ({ open: voice.open[index]!, round: voice.round[index]!, ...performed[index]! });
  const threads = options.rigThreads ?? defaultRigThreads();
  if (threads > 0) {
    const pool = RigPool.start({ ...rigOptions, threads });
    const produce: FrameProducer = async (index, out) => {
      const started = performance.now();
      await pool.render(index, poseOf(index), out);
      timings.composite += performance.now() - started;
    };
    return { produce, thumbnailIndex, featuresMs, sync, allocate: sharedFrameBuffer, close: () => pool.close() };
  }
  const rig = new FaceRig(rigOptions);
  const produce: FrameProducer = (index, out) => {
    const started = performance.now();
    rig.render(poseOf(index), out);
    timings.composite += performance.now() - started;
  };
  return { produce, thumbnailIndex, featuresMs, sync, allocate: (bytes) => Buffer.allocUnsafe(bytes), close: async () => undefined };
}

/** A learned model: batches of mel windows and face crops through onnxruntime, blended back at the mouth. */
async function modelSynthesis(model: LipSyncModel, job: PreparedJob, frames: number, fps: number, options: RenderVideoOptions, timings: StageTimings): Promise<Synthesis> {
  let mark = performance.now();
  // The model hears the voice alone when there is a vocal stem.
  const mel = melSpectrogram((job.vocals ?? job.audio).samples);
  const featuresMs = performance.now() - mark;
  const { frame } = job;
  const crop = cropBoxFor(mouthRegionOf(job.frameFace), frame.width, frame.height);
  const faceSize = model.faceSize;
  const batch = model.batchSize;
  const faceInput = await buildFaceInput(frame, crop, faceSize);
  const faceBatch = new Float32Array(batch * faceInput.length);
  for (let n = 0; n < batch; n++) faceBatch.set(faceInput, n * faceInput.length);
  const compositor = new FrameCompositor({
    frame,
    crop,
    faceSize,
    faceInput,
    blend: options.blend,
    overlay: options.watermark ? await createWatermark(frame.width, frame.height) : undefined,
  });
  const infer = async (batchIndex: number): Promise<Float32Array> => {
    const audioBatch = new Float32Array(batch * MEL_BANDS * MEL_WINDOW);
    for (let n = 0; n < batch; n++) {
      // The last batch is padded by repeating its final frame; padded outputs are dropped.
      const frameIndex = Math.min(frames - 1, batchIndex * batch + n);
      copyMelWindow(mel, frameIndex, fps, audioBatch, n * MEL_BANDS * MEL_WINDOW);
    }
    const started = performance.now();
    const output = await model.run(audioBatch, faceBatch);
    timings.inference += performance.now() - started;
    return output;
  };
  const plane = 3 * faceSize * faceSize;
  let current: { index: number; output: Promise<Float32Array> } | undefined;
  let next: { index: number; output: Promise<Float32Array> } | undefined;
  const produce: FrameProducer = async (index, out) => {
    const batchIndex = Math.floor(index / batch);
    if (current?.index !== batchIndex) {
      current = next?.index === batchIndex ? next : { index: batchIndex, output: infer(batchIndex) };
      // The next batch runs on onnxruntime's threads while this one is composited and encoded.
      next = batchIndex + 1 < Math.ceil(frames / batch) ? { index: batchIndex + 1, output: infer(batchIndex + 1) } : undefined;
      next?.output.catch(() => undefined);
    }
    const generated = await current.output;
    mark = performance.now();
    compositor.composeFrame(generated, (index % batch) * plane, out);
    timings.composite += performance.now() - mark;
  };
  // One frame at a time, in order: the batch bookkeeping above assumes it.
  let queue: Promise<void> = Promise.resolve();
  const inOrder: FrameProducer = (index, out) => (queue = queue.then(() => produce(index, out)));
  return {
    produce: inOrder,
    thumbnailIndex: Math.min(frames - 1, Math.floor(frames / 3)),
    featuresMs,
    allocate: (bytes) => Buffer.allocUnsafe(bytes),
    close: async () => undefined,
  };
}

/** Renders the singing video and its thumbnail; removes partial outputs on failure or abort. */
export async function renderVideo(options: RenderVideoOptions): Promise<RenderResult> {
  const started = performance.now();
  const { model, signal } = options;
  const logger = options.logger ?? silentLogger;
  const fps = options.fps ?? 25;
  const width = options.width ?? DEFAULT_OUTPUT_WIDTH;
  if (width % 2 !== 0 || width < 64 || width > MAX_OUTPUT_SIZE) throw new RangeError(`width must be even and within 64..${MAX_OUTPUT_SIZE}, got ${width}`);
  throwIfAborted(signal);

  const job = await prepareJob(options).catch((error: unknown) => {
    // ffmpeg killed by the signal surfaces as a plain AbortError; report it like any other cancellation.
    throwIfAborted(signal);
    throw error;
  });
  const { frame, audio } = job;
  const frames = Math.ceil(audio.durationSeconds * fps - 1e-9);
  const timings: StageTimings = { ...job.timings, features: 0, inference: 0, composite: 0, encode: 0, total: 0 };
  // ffmpeg starts (a process and x264's set-up) while the audio is analysed and the rig is built.
  const encoder = new FfmpegEncoder({
    width: frame.width,
    height: frame.height,
    fps,
    audioPath: options.audioPath,
    ...(options.soundtrackPath ? { soundtrackPath: options.soundtrackPath } : {}),
    outputPath: options.outputPath,
    preset: options.preset,
  });
  const rawFrames: WriteStream | undefined = options.rawFramesPath ? createWriteStream(options.rawFramesPath) : undefined;
  let thumbnail: Promise<unknown> | undefined;
  let lastPercent = -1;
  let synthesis: Synthesis | undefined;
  try {
    synthesis = model ? await modelSynthesis(model, job, frames, fps, options, timings) : await rigSynthesis(job, frames, fps, options, timings);
    timings.features = synthesis.featuresMs;
    logger.info('render job prepared', {
      frames,
      durationSeconds: audio.durationSeconds,
      width: frame.width,
      height: frame.height,
      renderer: model ? 'model' : 'face-rig',
      faceMethod: job.face.method,
      faceSource: job.faceOrigin.source,
    });
    const frameBytes = frame.width * frame.height * 3;
    const pool = Array.from({ length: FRAME_POOL }, () => ({ buffer: synthesis!.allocate(frameBytes), flushed: Promise.resolve() }));
    // Frames are drawn up to FRAME_POOL - 1 ahead of the one being handed to ffmpeg, each into its slot
    // as soon as ffmpeg has taken the slot's previous frame.
    const drawn: Array<Promise<void>> = [];
    const draw = (index: number) => {
      const slot = pool[index % FRAME_POOL]!;
      drawn[index] = slot.flushed.then(() => synthesis!.produce(index, slot.buffer));
      drawn[index].catch(() => undefined); // awaited in order below
    };
    const ahead = FRAME_POOL - 1;
    for (let index = 0; index < Math.min(ahead, frames); index++) draw(index);
    for (let index = 0; index < frames; index++) {
      throwIfAborted(signal);
      if (index + ahead < frames) draw(index + ahead);
      const mark = performance.now();
      await drawn[index];
      timings.encode += performance.now() - mark;
      const slot = pool[index % FRAME_POOL]!;
      if (index === synthesis.thumbnailIndex) {
        thumbnail = sharp(Buffer.from(slot.buffer), { raw: { width: frame.width, height: frame.height, channels: 3 } })
          .jpeg({ quality: 85, mozjpeg: true })
          .toFile(options.thumbnailPath);
      }
      const flushed = encoder.write(slot.buffer);
      // A failed write is reported by the next wait on this slot or by finish().
      flushed.catch(() => undefined);
      slot.flushed = flushed;
      if (rawFrames && !rawFrames.write(Buffer.from(slot.buffer))) await new Promise<void>((resolve) => rawFrames.once('drain', () => resolve()));
      const percent = Math.floor(((index + 1) / frames) * 99);
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
    await encoder.kill();
    rawFrames?.destroy();
    await thumbnail?.catch(() => undefined);
    await Promise.all([options.outputPath, options.thumbnailPath, options.rawFramesPath].map((path) => (path ? rm(path, { force: true }) : undefined)));
    throw error;
  } finally {
    await synthesis?.close();
  }
  timings.total = performance.now() - started;
  options.onProgress?.(100);
  const sync = synthesis.sync;
  logger.info('render finished', { frames, ms: Math.round(timings.total), ...(sync ? { sync } : {}) });
  return {
    durationSeconds: audio.durationSeconds,
    frames,
    fps,
    width: frame.width,
    height: frame.height,
    renderer: model ? 'model' : 'face-rig',
    stageTimings: timings,
    face: job.face,
    framing: job.framing,
    fit: job.fit,
    faceOrigin: job.faceOrigin,
    ...(sync ? { sync } : {}),
  };
}
