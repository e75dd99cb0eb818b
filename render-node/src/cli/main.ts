import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import sharp from 'sharp';
import { DEFAULT_VIDEO_ASPECT, VideoAspect } from '@petsing/workflows';
import { SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { parseRenderNodeEnv } from '../config.ts';
import { isRenderError } from '../errors.ts';
import { encoderArgs } from '../ffmpeg-encoder.ts';
import { defaultFit } from '../framing.ts';
import { loadLipSyncModel, type LipSyncModel } from '../lipsync-model.ts';
import type { Logger } from '../logger.ts';
import { decodeImage } from '../image-decoder.ts';
import { loadOnnxFaceDetector } from '../onnx-detector.ts';
import { loadPetFaceModel } from '../pet-face-model.ts';
import { detectInPhoto, DetectionFailure, faceRecord, type FaceDetector, type PetFace, type Point } from '../pet-face.ts';
import { renderVideo, type StageTimings } from '../render-pipeline.ts';
import { defaultRigThreads } from '../rig-pool.ts';
import { renderSamplePet } from '../sample-pet.ts';
import { writeSyntheticMix, writeSyntheticSong } from './synthetic-audio.ts';

const run = promisify(execFile);

const USAGE = `render-node: the petsing render node's tools

  render-node render --image pet.jpg --audio song.mp3 --out out.mp4
                     [--vocals vocals.wav] [--accompaniment accompaniment.wav] [--thumbnail out.jpg] [--model m.onnx] [--provider cpu|cuda]
                     [--cuda-fallback cpu|refuse] [--no-watermark] [--size 720] [--fps 25]
                     [--aspect square|4:5|9:16] [--rig-threads N] [--batch-size 32] [--detector-model d.onnx]
                     [--no-idle-motion] [--mouth X,Y] [--json]
  render-node detect --image pet.jpg [--json] [--provider cpu|cuda] [--cuda-fallback cpu|refuse]
                     [--detector-model d.onnx]
  render-node bench  [--seconds 20] [--rounds 3] [--size 720] [--aspect square|4:5|9:16] [--rig-threads N] [--fps 25]
                     [--model m.onnx] [--provider cpu|cuda] [--preset veryfast] [--stems] [--keep DIR]
  render-node doctor [--model m.onnx] [--provider cpu|cuda] [--detector-model d.onnx]

--mouth: where the pet's mouth is, in pixels of the photo (after EXIF orientation); the render uses it
as given. --vocals and --accompaniment: the audio's stems (as audio preparation makes them): the mouth follows the
vocals and rests where they hold no voice, the accompaniment's beats move the head (bench --stems: a synthetic band). detect --json prints exactly one JSON object: {"face": null | {...}, "model": ..., "providers": [...]}
(README). --provider runs the pet-face model (and a learned lip-sync model) on the CPU or CUDA.
--size is the output width; the height follows --aspect (square 720x720, 4:5 720x900, 9:16 720x1280).
Without --model (or RENDER_MODEL_PATH) the face rig animates the photo; with one, the learned model does.

Defaults come from RENDER_MODEL_PATH, RENDER_EXECUTION_PROVIDER, RENDER_CUDA_FALLBACK,
RENDER_OUTPUT_SIZE, RENDER_FPS, RENDER_BATCH_SIZE, RENDER_RIG_THREADS and RENDER_DETECTOR_MODEL_PATH.
`;

const consoleLogger = (verbose: boolean): Logger => ({
  info: (message, fields) => {
    if (verbose) console.error(`info: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
  },
  warn: (message, fields) => console.error(`warn: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
  error: (message, fields) => console.error(`error: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
});

const commonOptions = {
  model: { type: 'string' },
  provider: { type: 'string' },
  'cuda-fallback': { type: 'string' },
  size: { type: 'string' },
  fps: { type: 'string' },
  'batch-size': { type: 'string' },
  'rig-threads': { type: 'string' },
  'detector-model': { type: 'string' },
  aspect: { type: 'string' },
  verbose: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function settings(values: Record<string, string | boolean | undefined>) {
  const pick = (key: string, envKey: string) => (typeof values[key] === 'string' ? (values[key] as string) : process.env[envKey]);
  return parseRenderNodeEnv({
    RENDER_MODEL_PATH: pick('model', 'RENDER_MODEL_PATH'),
    RENDER_EXECUTION_PROVIDER: pick('provider', 'RENDER_EXECUTION_PROVIDER'),
    RENDER_CUDA_FALLBACK: pick('cuda-fallback', 'RENDER_CUDA_FALLBACK'),
    RENDER_OUTPUT_SIZE: pick('size', 'RENDER_OUTPUT_SIZE'),
    RENDER_FPS: pick('fps', 'RENDER_FPS'),
    RENDER_BATCH_SIZE: pick('batch-size', 'RENDER_BATCH_SIZE'),
    RENDER_RIG_THREADS: pick('rig-threads', 'RENDER_RIG_THREADS'),
    RENDER_DETECTOR_MODEL_PATH: pick('detector-model', 'RENDER_DETECTOR_MODEL_PATH'),
  });
}

function progressBar(label: string): (percent: number) => void {
  const interactive = process.stderr.isTTY;
  let last = -1;
  return (percent) => {
    if (percent === last) return;
    last = percent;
    const filled = Math.round(percent / 4);
    const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(25 - filled)}] ${String(percent).padStart(3)}%`;
    if (interactive) process.stderr.write(`\r${line}${percent === 100 ? '\n' : ''}`);
    else if (percent % 25 === 0 || percent === 100) process.stderr.write(`${line}\n`);
  };
}

async function renderCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...commonOptions,
      image: { type: 'string' },
      audio: { type: 'string' },
      vocals: { type: 'string' },
      accompaniment: { type: 'string' },
      out: { type: 'string' },
      thumbnail: { type: 'string' },
      'no-watermark': { type: 'boolean', default: false },
      'no-idle-motion': { type: 'boolean', default: false },
      mouth: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const mouth = values.mouth === undefined ? undefined : parsePoint(values.mouth);
  if (mouth === null) {
    console.error('--mouth takes two pixel coordinates of the photo: --mouth 512,640');
    return 2;
  }
  if (values.help || !values.image || !values.audio || !values.out) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const config = settings(values);
  const logger = consoleLogger(values.verbose);
  const aspect = parseAspect(values.aspect);
  if (!aspect) return 2;
  const model = await loadConfiguredModel(config, logger);
  const detector = await loadDetector(config, logger);
  const faceHints = mouth ? await mouthHint(values.image, mouth) : undefined;
  const thumbnailPath = values.thumbnail ?? values.out.replace(/\.[^./]+$/, '') + '.jpg';
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  const result = await renderVideo({
    model,
    detector,
    imagePath: values.image,
    audioPath: values.audio,
    ...(values.vocals ? { vocalsPath: values.vocals } : {}),
    ...(values.accompaniment ? { accompanimentPath: values.accompaniment } : {}),
    outputPath: values.out,
    thumbnailPath,
    watermark: !values['no-watermark'],
    idleMotion: !values['no-idle-motion'],
    ...(faceHints ? { faceHints } : {}),
    width: config.RENDER_OUTPUT_SIZE,
    aspect,
    fps: config.RENDER_FPS,
    ...(config.RENDER_RIG_THREADS === undefined ? {} : { rigThreads: config.RENDER_RIG_THREADS }),
    onProgress: values.json ? undefined : progressBar('rendering'),
    signal: controller.signal,
    logger,
  });
  await model?.release();
  await detector.release?.();
  const seconds = result.stageTimings.total / 1000;
  if (values.json) {
    const stageMs = Object.fromEntries(Object.entries(result.stageTimings).map(([stage, ms]) => [stage, Math.round(ms)]));
    const crop = Object.fromEntries(Object.entries(result.framing).map(([key, value]) => [key, Math.round(value)]));
    console.log(JSON.stringify({ output: values.out, thumbnail: thumbnailPath, crop, width: result.width, height: result.height, aspect, renderer: result.renderer, fps: result.fps, frames: result.frames, duration_seconds: result.durationSeconds, framing: result.fit, face: faceJson(result.face), ...detectorJson(detector), ...(result.sync ? { sync: result.sync } : {}), stage_ms: stageMs }));
    return 0;
  }
  console.log(`wrote ${values.out} and ${thumbnailPath}: ${result.frames} frames, ${result.durationSeconds.toFixed(2)} s, rendered in ${seconds.toFixed(2)} s (real-time factor ${(seconds / result.durationSeconds).toFixed(2)})`);
  if (result.sync) console.log(`sync: ${JSON.stringify(result.sync)}`);
  return 0;
}

function stageTable(timings: StageTimings, frames: number): string {
  const rows: Array<[string, number]> = [
    ['decode (image + audio)', timings.decode],
    ['features (voice track or mel)', timings.features],
    ['detect + framing', timings.detect],
    ['inference (onnxruntime)', timings.inference],
    ['synthesis (face rig, or blending model crops)', timings.composite],
    ['encode wait (ffmpeg backpressure + flush)', timings.encode],
    ['total wall time', timings.total],
  ];
  return rows.map(([name, ms]) => `  ${name.padEnd(44)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / frames).toFixed(2).padStart(6)} ms/frame`).join('\n');
}

async function benchCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...commonOptions, seconds: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' }, preset: { type: 'string', default: 'veryfast' }, stems: { type: 'boolean', default: false }, keep: { type: 'string' } },
  });
  if (values.help) {
    console.error(USAGE);
    return 0;
  }
  const config = settings(values);
  const seconds = Number(values.seconds);
  const aspect = parseAspect(values.aspect);
  if (!aspect) return 2;
  const width = config.RENDER_OUTPUT_SIZE;
  const fps = config.RENDER_FPS;
  const dir = values.keep ?? (await mkdtemp(join(tmpdir(), 'petsing-bench-')));
  try {
    const imagePath = join(dir, 'sample-pet.png');
    const audioPath = join(dir, values.stems ? 'mix.wav' : 'song.mp3');
    const outputPath = join(dir, 'bench.mp4');
    const rawPath = join(dir, 'frames.rgb');
    // Large enough that no shape is enlarged: the benchmark measures full-size frames.
    await writeFile(imagePath, await renderSamplePet(2048));
    // With --stems, the song is the vocal stem over a synthetic band (the accompaniment stem), and the mix the analysis copy.
    const stems = values.stems ? { vocalsPath: join(dir, 'vocals.wav'), accompanimentPath: join(dir, 'accompaniment.wav') } : {};
    if (values.stems) await writeSyntheticMix({ mix: audioPath, voice: stems.vocalsPath!, band: stems.accompanimentPath! }, seconds);
    else await writeSyntheticSong(audioPath, seconds);

    const model = await loadConfiguredModel(config, consoleLogger(values.verbose));
    const rigThreads = config.RENDER_RIG_THREADS ?? defaultRigThreads();
    const common = { model, imagePath, audioPath, ...stems, watermark: true, faceHints: SAMPLE_PET_FACE, width, aspect, fps, preset: values.preset, rigThreads };
    // The frames once into a raw file (untimed), for the encoder-alone runs.
    await renderVideo({ ...common, outputPath: join(dir, 'bench-raw.mp4'), thumbnailPath: join(dir, 'bench-raw.jpg'), rawFramesPath: rawPath });
    const rounds = Math.max(1, Number(values.rounds));
    const ratios: number[] = [];
    let render: Awaited<ReturnType<typeof renderVideo>> | undefined;
    let encodeSeconds = 0;
    // Render and encoder alone alternate, so a change in the machine's load hits both alike.
    for (let round = 0; round < rounds; round++) {
      const rendered = await renderVideo({ ...common, outputPath, thumbnailPath: join(dir, 'bench.jpg') });
      const encodeStarted = performance.now();
      await run('ffmpeg', encoderArgs({ width: rendered.width, height: rendered.height, fps, audioPath, outputPath: join(dir, 'encoder-only.mp4'), preset: values.preset }, rawPath));
      const encoded = (performance.now() - encodeStarted) / 1000;
      ratios.push(rendered.stageTimings.total / 1000 / encoded);
      if (round === 0) [render, encodeSeconds] = [rendered, encoded];
    }
    await rm(rawPath, { force: true });
    const first = render!;
    const renderer = model ? `model ${model.metadata.model_version ?? model.source} (S=${model.faceSize}, batch ${model.batchSize}), provider ${model.provider}` : `face rig (CPU, ${rigThreads ? `${rigThreads} worker thread${rigThreads > 1 ? 's' : ''}` : 'on the render loop'})`;
    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    console.log(`render benchmark: ${seconds} s clip${values.stems ? ' with stems (a synthetic voice over a synthetic band)' : ''}, ${first.width}x${first.height} (${aspect}), ${fps} fps, ${renderer}`);
    console.log(`machine: ${availableParallelism()} cores, ${cpu}, node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}`);
    const wall = first.stageTimings.total / 1000;
    console.log(`\nfull render, round 1 (stages overlap, so the stage times add up to more than the total):`);
    console.log(stageTable(first.stageTimings, first.frames));
    console.log(`  => ${first.frames} frames in ${wall.toFixed(2)} s: ${(first.frames / wall).toFixed(1)} fps, real-time factor ${(wall / first.durationSeconds).toFixed(3)}`);
    console.log(`\nencoder alone on the same ${first.frames} frames, round 1 (ffmpeg libx264 ${values.preset} + AAC, reading raw RGB from a file):`);
    console.log(`  ${encodeSeconds.toFixed(2)} s: ${(first.frames / encodeSeconds).toFixed(1)} fps, real-time factor ${(encodeSeconds / first.durationSeconds).toFixed(3)}`);
    const sorted = [...ratios].sort((x, y) => x - y);
    console.log(`\nratio render / encoder alone, ${rounds} alternating round${rounds > 1 ? 's' : ''}: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}`);
    const outputBytes = (await stat(outputPath)).size;
    console.log(`output: ${(outputBytes / 1024).toFixed(0)} KiB${values.keep ? ` in ${dir}` : ''}`);
    await model?.release();
    return 0;
  } finally {
    if (!values.keep) await rm(dir, { recursive: true, force: true });
  }
}

async function check(name: string, action: () => Promise<string>): Promise<boolean> {
  try {
    console.log(`ok    ${name}: ${await action()}`);
    return true;
  } catch (error) {
    const hint = isRenderError(error) ? ` (${error.code}; ${error.hint})` : '';
    console.log(`FAIL  ${name}: ${(error as Error).message}${hint}`);
    return false;
  }
}

async function doctorCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: commonOptions });
  if (values.help) {
    console.error(USAGE);
    return 0;
  }
  const config = settings(values);
  const results: boolean[] = [];
  results.push(
    await check('ffmpeg', async () => {
      const { stdout } = await run('ffmpeg', ['-hide_banner', '-encoders']);
      const missing = ['libx264', ' aac '].filter((encoder) => !stdout.includes(encoder));
      if (missing.length > 0) throw new Error(`missing encoders: ${missing.join(', ')}`);
      const version = (await run('ffmpeg', ['-version'])).stdout.split('\n')[0];
      return `${version}; libx264 and aac present`;
    }),
  );
  results.push(await check('ffprobe', async () => (await run('ffprobe', ['-version'])).stdout.split('\n')[0] ?? ''));
  results.push(
    await check('image formats', async () => {
      const heifSuffixes = sharp.format.heif.input.fileSuffix ?? [];
      const heifConvert = await run('heif-convert', ['--version']).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
      );
      if (!heifConvert) throw new Error('heif-convert not found: HEIC photos will fail (apt-get install libheif-examples)');
      return `sharp ${sharp.versions.sharp} / libvips ${sharp.versions.vips}: JPEG, PNG, WebP, AVIF (${heifSuffixes.join(' ')}); HEIC via heif-convert`;
    }),
  );
  let model: LipSyncModel | undefined;
  results.push(
    await check(config.RENDER_MODEL_PATH ? `lip-sync model (${config.RENDER_EXECUTION_PROVIDER})` : 'renderer', async () => {
      model = await loadConfiguredModel(config, consoleLogger(true));
      if (!model) return 'the face rig (no RENDER_MODEL_PATH): CPU, no model file needed';
      const b = model.binding;
      return `${model.source}: audio "${b.audioInput}" [N,1,80,16], face "${b.faceInput}" [N,6,${b.faceSize},${b.faceSize}], output "${b.output}"; provider ${model.provider}; batch ${model.batchSize}`;
    }),
  );
  results.push(
    await check(`face detector (${config.RENDER_DETECTOR_MODEL_PATH ? 'custom' : `pet-face model, ${config.RENDER_EXECUTION_PROVIDER}`})`, async () => {
      const detector = await loadDetector(config, consoleLogger(true));
      try {
        // The drawn sample pet is no photo: what counts is that the model runs and answers, and how fast.
        const png = await renderSamplePet(512);
        const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const started = performance.now();
        const found = await detector.detect({ width: info.width, height: info.height, data });
        const ms = (performance.now() - started).toFixed(0);
        const provider = `, providers ${detectorJson(detector).providers.join(', ')}`;
        return found instanceof DetectionFailure
          ? `${detector.name}${provider}: the drawn sample pet answered in ${ms} ms (${found.reason})`
          : `${detector.name}${provider}: the drawn sample pet answered in ${ms} ms (a ${found.species ?? 'pet'}, mouth at ${found.mouth.map(Math.round).join(', ')})`;
      } finally {
        await detector.release?.();
      }
    }),
  );
  await (model as LipSyncModel | undefined)?.release();
  const failed = results.filter((ok) => !ok).length;
  console.log(failed === 0 ? '\nall checks passed' : `\n${failed} check(s) failed`);
  return failed === 0 ? 0 : 1;
}

/** The learned model RENDER_MODEL_PATH (or --model) names; none: the face rig renders. */
async function loadConfiguredModel(config: ReturnType<typeof settings>, logger: Logger): Promise<LipSyncModel | undefined> {
  if (!config.RENDER_MODEL_PATH) return undefined;
  return await loadLipSyncModel({
    modelPath: config.RENDER_MODEL_PATH,
    provider: config.RENDER_EXECUTION_PROVIDER,
    cudaFallback: config.RENDER_CUDA_FALLBACK,
    batchSize: config.RENDER_BATCH_SIZE,
    logger,
  });
}

function parseAspect(value: string | undefined): VideoAspect | null {
  const parsed = VideoAspect.safeParse(value ?? DEFAULT_VIDEO_ASPECT);
  if (!parsed.success) console.error(`--aspect takes one of ${VideoAspect.options.join(', ')}`);
  return parsed.success ? parsed.data : null;
}

/**
 * A custom detector (--detector-model, RENDER_DETECTOR_MODEL_PATH; CPU), else the pet-face model on the provider
 * asked for (--provider, RENDER_EXECUTION_PROVIDER, with --cuda-fallback), warmed up as it loads.
 */
async function loadDetector(config: ReturnType<typeof settings>, logger: Logger): Promise<FaceDetector & { providers?: string[] }> {
  if (config.RENDER_DETECTOR_MODEL_PATH) return await loadOnnxFaceDetector(config.RENDER_DETECTOR_MODEL_PATH, { logger });
  return await loadPetFaceModel({ provider: config.RENDER_EXECUTION_PROVIDER, cudaFallback: config.RENDER_CUDA_FALLBACK, logger });
}

/** Which face finder answered and on which execution providers (a custom detector runs on the CPU). */
const detectorJson = (detector: FaceDetector & { providers?: string[] }) => ({ model: detector.version, providers: detector.providers ?? ['cpu'] });

/** "x,y" → a point; null when it is not two finite numbers. */
function parsePoint(text: string): Point | null {
  const parts = text.split(',').map((part) => Number(part.trim()));
  return parts.length === 2 && parts.every((n) => Number.isFinite(n) && n >= 0) ? [parts[0]!, parts[1]!] : null;
}

/** A mouth given in photo pixels, as the fractions the render's hints use. */
async function mouthHint(imagePath: string, [x, y]: Point) {
  const image = await decodeImage(imagePath);
  if (x > image.orientedWidth || y > image.orientedHeight) {
    throw new RangeError(`--mouth ${x},${y} lies outside the ${image.orientedWidth}×${image.orientedHeight} photo`);
  }
  return { mouth: { x: x / image.orientedWidth, y: y / image.orientedHeight } };
}

const rounded = (p: Point): Point => [Math.round(p[0]), Math.round(p[1])];

/** The face as `detect --json` and `render --json` print it: source pixels, snake_case. */
const faceJson = (face: PetFace) =>
  faceRecord(face, Math.round(face.confidence * 100) / 100, rounded, (h) => ({ left: Math.round(h.left), top: Math.round(h.top), width: Math.round(h.width), height: Math.round(h.height) }));

async function detectCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      image: { type: 'string' },
      json: { type: 'boolean', default: false },
      'detector-model': { type: 'string' },
      provider: { type: 'string' },
      'cuda-fallback': { type: 'string' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || !values.image) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const detector = await loadDetector(settings(values), consoleLogger(values.verbose));
  try {
    return await printDetection(values.image, detector, values.json);
  } finally {
    await detector.release?.();
  }
}

async function printDetection(image: string, detector: FaceDetector & { providers?: string[] }, json: boolean): Promise<number> {
  const { width, height, face, reason } = await detectInPhoto(image, detector);
  if (json) {
    console.log(JSON.stringify({ face: face ? { ...faceJson(face), framing: defaultFit(width, height, face) } : null, ...detectorJson(detector) }));
    return 0;
  }
  if (!face) {
    console.log(`no pet face found in ${image} (${width}×${height}): ${reason}`);
    return 0;
  }
  const f = faceJson(face);
  console.log(`pet face in ${image} (${width}×${height}), confidence ${f.confidence} (${face.method}):`);
  console.log(`  eyes   ${JSON.stringify(f.eyes)}
  nose   ${JSON.stringify(f.nose)}
  mouth  ${JSON.stringify(f.mouth)}  corners ${JSON.stringify(f.mouth_corners)}`);
  console.log(`  chin   ${JSON.stringify(f.chin)}
  head   ${JSON.stringify(f.head)}`);
  if (f.species) console.log(`  a ${f.species.replace('_', ' ')}, ${f.view} view, mouth ${f.mouth_open ? 'open' : 'closed'}`);
  if (defaultFit(width, height, face) === 'small-face') console.log('  small in the photo: a video shows the head smaller than it fills the frame (framing "small-face")');
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'render') return await renderCommand(rest);
    if (command === 'detect') return await detectCommand(rest);
    if (command === 'bench') return await benchCommand(rest);
    if (command === 'doctor') return await doctorCommand(rest);
    console.error(USAGE);
    return command === undefined || command === '--help' || command === '-h' ? 0 : 2;
  } catch (error) {
    if (isRenderError(error)) {
      console.error(`error (${error.code}${error.permanent ? ', permanent' : ''}): ${error.message}${error.detail ? ` (${error.detail})` : ''}\nhint: ${error.hint}`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
