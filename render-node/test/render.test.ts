import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { loadLipSyncModel } from '../src/lipsync-model.ts';
import { ensureGeneratedModel } from '../src/model-generator.ts';
import { FaceRig } from '../src/face-rig.ts';
import { prepareJob, renderVideo, type RenderResult } from '../src/render-pipeline.ts';
import { SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { renderSamplePet } from '../src/sample-pet.ts';
import { decodeRegion, decodeSamples, meanAbsDiff, pearson, probe, run, tempDir, testLogger, writeSilence, type Box } from './helpers.ts';

const FPS = 25;
const WIDTH = 512;
let dir: string;
let imagePath: string;
let songPath: string;
let silencePath: string;
let song: RenderResult;

const even = (v: number) => 2 * Math.round(v / 2);

/** A box around a point of the photo (fractions), mapped into the output frame through the reported framing. */
function frameBox(result: RenderResult, point: { x: number; y: number }, photoSide: number, size: number, below = 0.25): Box {
  const { left, top, width } = result.framing;
  const scale = result.width / width;
  const x = (point.x * photoSide - left) * scale;
  const y = (point.y * photoSide - top) * scale;
  return { left: even(x - size / 2), top: even(y - size * below), width: size, height: size };
}

const common = () => ({ imagePath, width: WIDTH, fps: FPS, faceHints: SAMPLE_PET_FACE, logger: testLogger });

beforeAll(async () => {
  dir = await tempDir('render');
  imagePath = join(dir, 'pet.png');
  songPath = join(dir, 'song.mp3');
  silencePath = join(dir, 'silence.wav');
  await writeFile(imagePath, await renderSamplePet(1024));
  await Promise.all([writeSyntheticSong(songPath, 10), writeSilence(silencePath, 10)]);
  song = await renderVideo({ ...common(), audioPath: songPath, outputPath: join(dir, 'song.mp4'), thumbnailPath: join(dir, 'song.jpg'), watermark: true });
  await renderVideo({ ...common(), audioPath: silencePath, outputPath: join(dir, 'silence.mp4'), thumbnailPath: join(dir, 'silence.jpg'), watermark: true });
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('rendering a 10 s clip with the face rig', () => {
  it('writes H.264 + AAC at 25 fps, the configured size, as long as the audio', async () => {
    const info = await probe(join(dir, 'song.mp4'));
    const video = info.streams.find((s) => s.codec_type === 'video')!;
    const audio = info.streams.find((s) => s.codec_type === 'audio')!;
    expect(video.codec_name).toBe('h264');
    expect(video.pix_fmt).toBe('yuv420p');
    expect(audio.codec_name).toBe('aac');
    expect(video.r_frame_rate).toBe('25/1');
    expect([video.width, video.height, song.width, song.height, song.renderer]).toEqual([WIDTH, WIDTH, WIDTH, WIDTH, 'face-rig']);
    const audioSeconds = (await decodeSamples(songPath)).length / 16000;
    expect(Math.abs(Number(info.format.duration) - audioSeconds)).toBeLessThanOrEqual(1 / FPS);
    expect(Number(video.nb_frames)).toBe(Math.ceil(audioSeconds * FPS));
    expect(song.frames).toBe(Number(video.nb_frames));
  });

  it('puts the moov atom first (faststart) and writes a JPEG thumbnail with the mouth open', async () => {
    const head = (await readFile(join(dir, 'song.mp4'))).subarray(0, 4096);
    expect(head.indexOf('moov')).toBeGreaterThan(0);
    expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat') === -1 ? Infinity : head.indexOf('mdat'));
    const thumbnail = await sharp(join(dir, 'song.jpg')).metadata();
    expect([thumbnail.format, thumbnail.width, thumbnail.height]).toEqual(['jpeg', WIDTH, WIDTH]);
    // The thumbnail is a singing frame: its mouth differs from the silent thumbnail's.
    const box = frameBox(song, SAMPLE_PET_FACE.mouth, 1024, 64);
    const [open, closed] = await Promise.all(
      ['song.jpg', 'silence.jpg'].map((name) => sharp(join(dir, name)).extract(box).greyscale().raw().toBuffer()),
    );
    expect(meanAbsDiff(open!, closed!)).toBeGreaterThan(8);
  });

  it('opens the mouth with the audio envelope (Pearson r >= 0.6) and closes it in the pauses', async () => {
    const box = frameBox(song, SAMPLE_PET_FACE.mouth, 1024, 96);
    const [sung, silent] = await Promise.all([decodeRegion(join(dir, 'song.mp4'), box), decodeRegion(join(dir, 'silence.mp4'), box)]);
    const mouthChange = sung.map((frame, i) => meanAbsDiff(frame, silent[i]!));
    const samples = await decodeSamples(songPath);
    const envelope = mouthChange.map((_, i) => {
      const start = Math.floor((i / FPS) * 16000);
      const end = Math.min(samples.length, start + 640);
      let sum = 0;
      for (let j = start; j < end; j++) sum += samples[j]! ** 2;
      return Math.sqrt(sum / Math.max(1, end - start));
    });
    expect(pearson(mouthChange, envelope)).toBeGreaterThanOrEqual(0.6);
    expect(Math.max(...mouthChange)).toBeGreaterThan(15);
    // The song pauses from 6.5 s to 8 s: once mouth and head have settled, the face is as in silence.
    const pause = mouthChange.slice(Math.round(7.3 * FPS), Math.round(7.95 * FPS));
    expect(Math.max(...pause)).toBeLessThan(2);
  });

  it('leaves the background as in the photo', async () => {
    const box: Box = { left: 8, top: 8, width: 64, height: 48 };
    const job = await prepareJob({ imagePath, audioPath: silencePath, width: WIDTH, faceHints: SAMPLE_PET_FACE });
    const still = await sharp(job.frame.data, { raw: { width: job.frame.width, height: job.frame.height, channels: 3 } }).extract(box).greyscale().raw().toBuffer();
    const frames = await decodeRegion(join(dir, 'song.mp4'), box);
    // Only the encoder's rounding: no idle motion reaches the corner.
    expect(Math.max(...frames.map((frame) => meanAbsDiff(frame, still)))).toBeLessThan(2);
  });

  it('keeps the pet alive without sound: it blinks now and then, and otherwise only breathes', async () => {
    const eyeY = SAMPLE_PET_FACE.eyes![0].y;
    const eyes = frameBox(song, { x: (SAMPLE_PET_FACE.eyes![0].x + SAMPLE_PET_FACE.eyes![1].x) / 2, y: eyeY }, 1024, 160, 0.5);
    const box = { ...eyes, top: eyes.top + 48, height: 64 };
    const frames = await decodeRegion(join(dir, 'silence.mp4'), box);
    const job = await prepareJob({ imagePath, audioPath: silencePath, width: WIDTH, faceHints: SAMPLE_PET_FACE });
    const still = await sharp(job.frame.data, { raw: { width: WIDTH, height: WIDTH, channels: 3 } }).greyscale().raw().toBuffer();
    // The still photo's eyes moved by up to two pixels (breath moves the head by whole pixels).
    const shifted: Uint8Array[] = [];
    for (let dy = -2; dy <= 2; dy++) {
      for (let dx = -2; dx <= 2; dx++) {
        const window = new Uint8Array(box.width * box.height);
        for (let y = 0; y < box.height; y++) window.set(still.subarray((box.top + y + dy) * WIDTH + box.left + dx, (box.top + y + dy) * WIDTH + box.left + dx + box.width), y * box.width);
        shifted.push(window);
      }
    }
    const residual = frames.map((frame) => Math.min(...shifted.map((window) => meanAbsDiff(frame, window))));
    // The eyes close now and then (a blink lasts a quarter of a second)...
    expect(Math.max(...residual)).toBeGreaterThan(6);
    // ...and are the photo's own eyes the rest of the time.
    expect(residual.filter((c) => c < 2.5).length).toBeGreaterThan(0.8 * residual.length);
  });

  it('without idle motion and without sound, every frame is the still photo', async () => {
    const path = join(dir, 'still.mp4');
    const result = await renderVideo({ ...common(), audioPath: silencePath, outputPath: path, thumbnailPath: join(dir, 'still.jpg'), watermark: false, idleMotion: false });
    const job = await prepareJob({ imagePath, audioPath: silencePath, width: WIDTH, faceHints: SAMPLE_PET_FACE });
    const whole: Box = { left: 0, top: 0, width: WIDTH, height: WIDTH };
    const still = await sharp(job.frame.data, { raw: { width: WIDTH, height: WIDTH, channels: 3 } }).greyscale().raw().toBuffer();
    const frames = await decodeRegion(path, whole);
    expect(frames.length).toBe(result.frames);
    expect(Math.max(...frames.map((frame) => meanAbsDiff(frame, still)))).toBeLessThan(1.5);
  });

  it('follows a song\'s mouth keyframes instead of the audio when given them (template songs)', async () => {
    const path = join(dir, 'keyed.mp4');
    // Silent audio, but the score says: open from 1.2 s to 2 s, closed otherwise.
    const keyframes: Array<[number, number, number]> = [[0, 0, 0], [1, 0, 0], [1.2, 1, 0], [2, 1, 0], [2.2, 0, 0], [10, 0, 0]];
    await renderVideo({ ...common(), audioPath: silencePath, outputPath: path, thumbnailPath: join(dir, 'keyed.jpg'), watermark: true, mouthTrack: { keyframes } });
    const box = frameBox(song, SAMPLE_PET_FACE.mouth, 1024, 96);
    const [keyed, silent] = await Promise.all([decodeRegion(path, box), decodeRegion(join(dir, 'silence.mp4'), box)]);
    const change = keyed.map((frame, i) => meanAbsDiff(frame, silent[i]!));
    expect(Math.min(...change.slice(Math.round(1.3 * FPS), Math.round(1.9 * FPS)))).toBeGreaterThan(10);
    // Closed again: the same as the silent render, up to the encoder's own choices (a frame or two differ where x264 places them).
    const closed = change.slice(Math.round(3 * FPS), Math.round(9 * FPS));
    expect(closed.filter((c) => c < 2).length).toBeGreaterThan(0.95 * closed.length);
  });

  it('draws the same frames on worker threads as on the render loop', async () => {
    const inline = join(dir, 'inline.mp4');
    const threaded = join(dir, 'threaded.mp4');
    const short = join(dir, 'short.wav');
    await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', songPath, '-t', '3', short]);
    await renderVideo({ ...common(), audioPath: short, outputPath: inline, thumbnailPath: join(dir, 'inline.jpg'), watermark: true, rigThreads: 0 });
    await renderVideo({ ...common(), audioPath: short, outputPath: threaded, thumbnailPath: join(dir, 'threaded.jpg'), watermark: true, rigThreads: 2 });
    const whole: Box = { left: 0, top: 0, width: WIDTH, height: WIDTH };
    const [a, b] = await Promise.all([decodeRegion(inline, whole), decodeRegion(threaded, whole)]);
    expect(b.length).toBe(a.length);
    // Two threads draw alternate frames with their own rigs: every frame is the same picture.
    expect(Math.max(...a.map((frame, i) => meanAbsDiff(frame, b[i]!)))).toBeLessThan(0.5);
    expect(Math.max(...a.map((frame) => meanAbsDiff(frame, a[0]!)))).toBeGreaterThan(1);
  }, 60_000);

  it('draws the watermark only when asked for', async () => {
    const box: Box = { left: WIDTH - 140, top: WIDTH - 60, width: 130, height: 50 };
    const plain = join(dir, 'plain.mp4');
    await renderVideo({ ...common(), audioPath: songPath, outputPath: plain, thumbnailPath: join(dir, 'plain.jpg'), watermark: false });
    const [marked, unmarked] = await Promise.all([decodeRegion(join(dir, 'song.mp4'), box), decodeRegion(plain, box)]);
    const differences = marked.map((frame, i) => meanAbsDiff(frame, unmarked[i]!));
    expect(Math.min(...differences)).toBeGreaterThan(10);
    expect((await stat(plain)).size).toBeGreaterThan(10_000);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', plain]);
    expect(Number(stdout.trim())).toBe(song.frames);
  });
});

describe('head motion', () => {
  it('moves the head by whole pixels (no resampling) and leaves the rest of the photo alone', async () => {
    const job = await prepareJob({ imagePath, audioPath: silencePath, width: WIDTH, faceHints: SAMPLE_PET_FACE });
    const rig = new FaceRig({ frame: job.frame, face: job.frameFace, blinks: false });
    const out = Buffer.alloc(job.frame.width * job.frame.height * 3);
    rig.render({ open: 0, round: 0, blink: 0, headX: 3, headY: -2 }, out);
    const at = (buffer: Buffer, x: number, y: number) => Array.from(buffer.subarray((y * WIDTH + x) * 3, (y * WIDTH + x) * 3 + 3));
    const [mx, my] = job.frameFace.mouth;
    const [ex, ey] = job.frameFace.eyes[0];
    // Inside the head: exactly the photo's pixel 3 to the left and 2 below.
    for (const [x, y] of [[Math.round(mx), Math.round(my) - 10], [Math.round(ex), Math.round(ey)], [Math.round(mx) + 20, Math.round(my) - 40]] as const) {
      expect(at(out, x, y)).toEqual(at(job.frame.data, x - 3, y + 2));
    }
    // Far corner: untouched.
    expect(at(out, 2, 2)).toEqual(at(job.frame.data, 2, 2));
    // Every output pixel is some photo pixel (a copy, never a blend): no value outside the photo's own.
    const colours = new Set<number>();
    for (let i = 0; i < job.frame.data.length; i += 3) colours.add((job.frame.data[i]! << 16) | (job.frame.data[i + 1]! << 8) | job.frame.data[i + 2]!);
    let foreign = 0;
    for (let i = 0; i < out.length; i += 3) if (!colours.has((out[i]! << 16) | (out[i + 1]! << 8) | out[i + 2]!)) foreign++;
    expect(foreign).toBe(0);
  });
});

describe('a learned model (the Wav2Lip contract)', () => {
  it('renders through onnxruntime when one is given, composited at the mouth', async () => {
    const model = await loadLipSyncModel({ modelPath: await ensureGeneratedModel({ cacheDir: dir }), provider: 'cpu', cudaFallback: 'refuse', logger: testLogger, batchSize: 16 });
    try {
      const path = join(dir, 'model.mp4');
      const result = await renderVideo({ ...common(), model, audioPath: songPath, outputPath: path, thumbnailPath: join(dir, 'model.jpg'), watermark: false });
      expect([result.renderer, result.width, result.height, result.frames]).toEqual(['model', WIDTH, WIDTH, song.frames]);
      expect(result.stageTimings.inference).toBeGreaterThan(0);
      const box = frameBox(result, SAMPLE_PET_FACE.mouth, 1024, 96);
      const [drawn, silent] = await Promise.all([decodeRegion(path, box), decodeRegion(join(dir, 'silence.mp4'), box)]);
      // The generated model draws a mouth that opens and closes with the song.
      const change = drawn.map((frame, i) => meanAbsDiff(frame, silent[i]!));
      expect(Math.max(...change) - Math.min(...change)).toBeGreaterThan(10);
    } finally {
      await model.release();
    }
  }, 60_000);
});
