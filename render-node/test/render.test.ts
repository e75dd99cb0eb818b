import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { loadLipSyncModel, type LipSyncModel } from '../src/lipsync-model.ts';
import { prepareJob, renderVideo, type RenderResult } from '../src/render-pipeline.ts';
import { renderSamplePet } from '../src/sample-pet.ts';
import { decodeRegion, decodeSamples, meanAbsDiff, pearson, probe, run, tempDir, testLogger, writeSilence, type Box } from './helpers.ts';

const FPS = 25;
const SIZE = 512;
let dir: string;
let model: LipSyncModel;
let imagePath: string;
let songPath: string;
let silencePath: string;
let song: RenderResult;

/** The part of the crop where the generated mouth appears (the model's mouth geometry, with margin). */
function mouthBox(result: RenderResult): Box {
  const { left, top, side } = result.crop;
  // Even numbers: ffmpeg's crop rounds odd sizes down on yuv420p video.
  const even = (v: number) => 2 * Math.round(v / 2);
  return { left: even(left + side * 0.3), top: even(top + side * 0.66), width: even(side * 0.4), height: even(side * 0.26) };
}

beforeAll(async () => {
  dir = await tempDir('render');
  imagePath = join(dir, 'pet.png');
  songPath = join(dir, 'song.mp3');
  silencePath = join(dir, 'silence.wav');
  await writeFile(imagePath, await renderSamplePet(768));
  await Promise.all([writeSyntheticSong(songPath, 10), writeSilence(silencePath, 10)]);
  model = await loadLipSyncModel({ provider: 'cpu', cudaFallback: 'refuse', logger: testLogger });
  const common = { model, imagePath, size: SIZE, fps: FPS, logger: testLogger };
  song = await renderVideo({ ...common, audioPath: songPath, outputPath: join(dir, 'song.mp4'), thumbnailPath: join(dir, 'song.jpg'), watermark: true });
  await renderVideo({ ...common, audioPath: silencePath, outputPath: join(dir, 'silence.mp4'), thumbnailPath: join(dir, 'silence.jpg'), watermark: true });
}, 120_000);

afterAll(async () => {
  await model?.release();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('rendering a 10 s clip', () => {
  it('writes H.264 + AAC at 25 fps, the configured size, as long as the audio', async () => {
    const info = await probe(join(dir, 'song.mp4'));
    const video = info.streams.find((s) => s.codec_type === 'video')!;
    const audio = info.streams.find((s) => s.codec_type === 'audio')!;
    expect(video.codec_name).toBe('h264');
    expect(video.pix_fmt).toBe('yuv420p');
    expect(audio.codec_name).toBe('aac');
    expect(video.r_frame_rate).toBe('25/1');
    expect([video.width, video.height]).toEqual([SIZE, SIZE]);
    const audioSeconds = (await decodeSamples(songPath)).length / 16000;
    expect(Math.abs(Number(info.format.duration) - audioSeconds)).toBeLessThanOrEqual(1 / FPS);
    expect(Number(video.nb_frames)).toBe(Math.ceil(audioSeconds * FPS));
    expect(song.frames).toBe(Number(video.nb_frames));
  });

  it('puts the moov atom first (faststart) and writes a JPEG thumbnail', async () => {
    const head = (await readFile(join(dir, 'song.mp4'))).subarray(0, 4096);
    expect(head.indexOf('moov')).toBeGreaterThan(0);
    expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat') === -1 ? Infinity : head.indexOf('mdat'));
    const thumbnail = await sharp(join(dir, 'song.jpg')).metadata();
    expect([thumbnail.format, thumbnail.width, thumbnail.height]).toEqual(['jpeg', SIZE, SIZE]);
  });

  it('opens the mouth with the audio envelope (Pearson r >= 0.6)', async () => {
    const box = mouthBox(song);
    const [sung, silent] = await Promise.all([decodeRegion(join(dir, 'song.mp4'), box), decodeRegion(join(dir, 'silence.mp4'), box)]);
    // The silent render has the same idle motion frame for frame, so the difference is the mouth alone.
    const mouthChange = sung.map((frame, i) => meanAbsDiff(frame, silent[i]!));
    const samples = await decodeSamples(songPath);
    const envelope = mouthChange.map((_, i) => {
      const start = Math.floor((i / FPS) * 16000);
      const end = Math.min(samples.length, start + 3200);
      let sum = 0;
      for (let j = start; j < end; j++) sum += samples[j]! ** 2;
      return Math.sqrt(sum / Math.max(1, end - start));
    });
    const r = pearson(mouthChange, envelope);
    expect(r).toBeGreaterThanOrEqual(0.6);
    // Frame-to-frame: when the envelope moves, the mouth moves.
    const delta = (values: number[]) => values.slice(1).map((v, i) => Math.abs(v - values[i]!));
    expect(pearson(delta(mouthChange), delta(envelope))).toBeGreaterThanOrEqual(0.3);
    expect(Math.max(...mouthChange)).toBeGreaterThan(20);
  });

  it('leaves regions far from the mouth as in the photo, apart from the idle motion', async () => {
    const job = await prepareJob({ imagePath, audioPath: silencePath, size: SIZE });
    const source = await sharp(job.frame.data, { raw: { width: SIZE, height: SIZE, channels: 3 } }).greyscale().raw().toBuffer();
    const stillRegion = (box: Box, dx: number, dy: number) => {
      const out = new Uint8Array(box.width * box.height);
      for (let y = 0; y < box.height; y++) {
        const row = (box.top + dy + y) * SIZE + box.left + dx;
        out.set(source.subarray(row, row + box.width), y * box.width);
      }
      return out;
    };
    const regions: Box[] = [
      { left: 16, top: 16, width: 96, height: 64 }, // background, top left
      { left: 200, top: 150, width: 112, height: 40 }, // eyes
    ];
    for (const box of regions) {
      const [sung, silent] = await Promise.all([decodeRegion(join(dir, 'song.mp4'), box), decodeRegion(join(dir, 'silence.mp4'), box)]);
      // Audio changes nothing here...
      expect(Math.max(...sung.map((frame, i) => meanAbsDiff(frame, silent[i]!)))).toBeLessThan(1.5);
      // ...and each frame is the photo moved by a few pixels of idle motion, not a different picture.
      const shifted: Uint8Array[] = [];
      for (let dy = -5; dy <= 5; dy++) for (let dx = -5; dx <= 5; dx++) shifted.push(stillRegion(box, dx, dy));
      const residual = sung.map((frame) => Math.min(...shifted.map((still) => meanAbsDiff(frame, still))));
      expect(Math.max(...residual)).toBeLessThan(6);
    }
    // The idle motion is real: the eyes move over the clip.
    const eyes = await decodeRegion(join(dir, 'song.mp4'), regions[1]!);
    expect(Math.max(...eyes.map((frame) => meanAbsDiff(frame, eyes[0]!)))).toBeGreaterThan(2);
  });
});

describe('silence and the watermark', () => {
  it('keeps the mouth closed on silent audio', async () => {
    const path = join(dir, 'still.mp4');
    const result = await renderVideo({
      model,
      imagePath,
      audioPath: silencePath,
      outputPath: path,
      thumbnailPath: join(dir, 'still.jpg'),
      watermark: false,
      idleMotion: false,
      size: SIZE,
      logger: testLogger,
    });
    const job = await prepareJob({ imagePath, audioPath: silencePath, size: SIZE });
    const box = mouthBox(result);
    const source = await sharp(job.frame.data, { raw: { width: SIZE, height: SIZE, channels: 3 } })
      .extract(box)
      .greyscale()
      .raw()
      .toBuffer();
    const frames = await decodeRegion(path, box);
    expect(frames.length).toBe(result.frames);
    expect(Math.max(...frames.map((frame) => meanAbsDiff(frame, source)))).toBeLessThan(2);
  });

  it('draws the watermark only when asked for', async () => {
    const box: Box = { left: SIZE - 140, top: SIZE - 60, width: 130, height: 50 };
    const plain = join(dir, 'plain.mp4');
    await renderVideo({ model, imagePath, audioPath: songPath, outputPath: plain, thumbnailPath: join(dir, 'plain.jpg'), watermark: false, size: SIZE, logger: testLogger });
    const [marked, unmarked] = await Promise.all([decodeRegion(join(dir, 'song.mp4'), box), decodeRegion(plain, box)]);
    const differences = marked.map((frame, i) => meanAbsDiff(frame, unmarked[i]!));
    expect(Math.min(...differences)).toBeGreaterThan(10);
    expect((await stat(plain)).size).toBeGreaterThan(10_000);
    // And the plain video matches its silent counterpart there (nothing else draws in that corner).
    const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', plain]);
    expect(Number(stdout.trim())).toBe(song.frames);
  });
});
