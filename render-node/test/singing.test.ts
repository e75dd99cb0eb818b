import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoAspect } from '@petsing/workflows';
import { MAX_UPSCALE } from '../src/framing.ts';
import { renderVideo, type RenderResult } from '../src/render-pipeline.ts';
import { decodeRegion, decodeSamples, meanAbsDiff, pearson, tempDir, testLogger, writeSilence, type Box } from './helpers.ts';
import { loadAnnotations, PETS, type Annotation } from './pet-annotations.ts';
import { writeSungClip, type SungClip } from './sung-clip.ts';

const exec = promisify(execFile);
const cli = resolve(import.meta.dirname, '../bin/render-node.mjs');
const FPS = 25;

let dir: string;
let clip: SungClip;
let voice: Float32Array;
let annotations: Record<string, Annotation>;

beforeAll(async () => {
  dir = await tempDir('singing');
  clip = await writeSungClip(dir);
  voice = await decodeSamples(clip.voicePath);
  annotations = await loadAnnotations(PETS);
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Crop = RenderResult['framing'];
const even = (v: number) => 2 * Math.round(v / 2);

/** A photo point in output-frame pixels, through the crop the render reports. */
function toFrame(crop: Crop, width: number, [x, y]: [number, number]): [number, number] {
  const scale = width / crop.width;
  return [(x - crop.left) * scale, (y - crop.top) * scale];
}

function faceUnit(annotation: Annotation): number {
  const [[x0, y0], [x1, y1]] = annotation.eyes!;
  return Math.hypot((x0 + x1) / 2 - annotation.chin![0], (y0 + y1) / 2 - annotation.chin![1]);
}

function boxAround(frameWidth: number, frameHeight: number, [x, y]: [number, number], size: number, below = 0.5): Box {
  const side = even(Math.max(16, Math.min(size, frameWidth, frameHeight)));
  return {
    left: even(Math.min(frameWidth - side, Math.max(0, x - side / 2))),
    top: even(Math.min(frameHeight - side, Math.max(0, y - side * (1 - below)))),
    width: side,
    height: side,
  };
}

/** Variance of the Laplacian: how much fine detail (fur) a grey window holds. */
function sharpness(grey: Uint8Array, width: number, height: number): number {
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const value = 4 * grey[i]! - grey[i - 1]! - grey[i + 1]! - grey[i - width]! - grey[i + width]!;
      sum += value;
      squares += value * value;
      n++;
    }
  }
  return squares / n - (sum / n) ** 2;
}

/** The photo as the output shows it without any animation: cut by the reported crop, scaled to the frame, grey. */
async function stillFrame(file: string, crop: Crop, width: number, height: number): Promise<Uint8Array> {
  return await sharp(join(PETS, file))
    .rotate()
    .extract({ left: Math.round(crop.left), top: Math.round(crop.top), width: Math.round(crop.width), height: Math.round(crop.height) })
    .resize(width, height)
    .greyscale()
    .raw()
    .toBuffer();
}

function windowOf(grey: Uint8Array, frameWidth: number, box: Box): Uint8Array {
  const out = new Uint8Array(box.width * box.height);
  for (let y = 0; y < box.height; y++) out.set(grey.subarray((box.top + y) * frameWidth + box.left, (box.top + y) * frameWidth + box.left + box.width), y * box.width);
  return out;
}

/** The voice's loudness (RMS) in each video frame. */
function vocalEnvelope(frames: number): number[] {
  const perFrame = 16000 / FPS;
  return Array.from({ length: frames }, (_, i) => {
    let sum = 0;
    for (let j = i * perFrame; j < (i + 1) * perFrame && j < voice.length; j++) sum += voice[j]! ** 2;
    return Math.sqrt(sum / perFrame);
  });
}

interface CliRender {
  crop: Crop;
  width: number;
  height: number;
  frames: number;
}

/** `render-node render --mouth X,Y --json`, as a person pointing at the mouth would run it. */
async function renderWithCli(file: string, audioPath: string, name: string, extra: string[] = []): Promise<CliRender & { path: string }> {
  const annotation = annotations[file]!;
  const path = join(dir, `${name}.mp4`);
  const { stdout } = await exec(process.execPath, [cli, 'render', '--image', join(PETS, file), '--audio', audioPath, '--out', path, '--mouth', annotation.mouth!.join(','), '--no-watermark', '--json', ...extra]);
  return { ...(JSON.parse(stdout) as CliRender), path };
}

describe('singing real pets, driven by the voice over a band that never stops', () => {
  for (const file of ['dog-04.jpg', 'cat-01.jpg', 'bird-02.jpg', 'hamster-02.jpg', 'rabbit-01.jpg']) {
    it(`${file}: the mouth follows the voice, the rest of the photo stays put and sharp`, async () => {
      const annotation = annotations[file]!;
      const render = await renderWithCli(file, clip.songPath, file.replace(/\.\w+$/, ''));
      // 720 px square, or less for a small photo: at most its own resolution, the shown part at most twice enlarged.
      const expected = even(Math.min(720, annotation.width, annotation.height, MAX_UPSCALE * render.crop.width));
      expect([render.width, render.height]).toEqual([expected, expected]);
      const unit = faceUnit(annotation) * (render.width / render.crop.width);
      const mouth = toFrame(render.crop, render.width, annotation.mouth!);
      const mouthBox = boxAround(render.width, render.height, mouth, 0.6 * unit, 0.75);
      const frames = await decodeRegion(render.path, mouthBox);
      expect(frames.length).toBe(render.frames);
      // The clip opens with 1.5 s of band alone: frame 10 is the closed mouth.
      const change = frames.map((frame) => meanAbsDiff(frame, frames[10]!));
      const envelope = vocalEnvelope(frames.length);
      expect(pearson(change, envelope), 'mouth vs voice').toBeGreaterThanOrEqual(0.6);

      // The frame corner farthest from the mouth: only idle life, if anything.
      const far = boxAround(render.width, render.height, [mouth[0] < render.width / 2 ? render.width : 0, mouth[1] < render.height / 2 ? render.height : 0], 48);
      const corner = await decodeRegion(render.path, far);
      expect(Math.max(...corner.map((frame) => meanAbsDiff(frame, corner[10]!))), 'far corner').toBeLessThan(3);

      // Fur above the eyes keeps the photo's sharpness (the head moves by whole pixels; nothing resamples it).
      const [[x0, y0], [x1, y1]] = annotation.eyes!;
      const [ex, ey] = toFrame(render.crop, render.width, [(x0 + x1) / 2, (y0 + y1) / 2]);
      const furBox = boxAround(render.width, render.height, [ex, ey - 0.45 * unit], 0.35 * unit, 0.5);
      const still = windowOf(await stillFrame(file, render.crop, render.width, render.height), render.width, furBox);
      const reference = sharpness(still, furBox.width, furBox.height);
      const ratios = (await decodeRegion(render.path, furBox)).map((frame) => sharpness(frame, furBox.width, furBox.height) / reference).sort((a, b) => a - b);
      expect(ratios.reduce((a, b) => a + b, 0) / ratios.length, 'mean fur sharpness').toBeGreaterThanOrEqual(0.9);
      expect(ratios[Math.floor(ratios.length / 10)]!, 'fur sharpness, 10th percentile frame').toBeGreaterThanOrEqual(0.8);
    }, 60_000);
  }

  it('keeps the mouth closed in silence', async () => {
    const silence = join(dir, 'silence.wav');
    await writeSilence(silence, 3);
    const file = 'cat-01.jpg';
    const annotation = annotations[file]!;
    const render = await renderWithCli(file, silence, 'silent-cat');
    const unit = faceUnit(annotation) * (render.width / render.crop.width);
    const mouthBox = boxAround(render.width, render.height, toFrame(render.crop, render.width, annotation.mouth!), 0.6 * unit, 0.75);
    const still = await stillFrame(file, render.crop, render.width, render.height);
    // Breathing may move the head by a pixel: compare with the still photo moved by up to two.
    const shifted: Uint8Array[] = [];
    for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) shifted.push(windowOf(still, render.width, { ...mouthBox, left: mouthBox.left + dx, top: mouthBox.top + dy }));
    const frames = await decodeRegion(render.path, mouthBox);
    const residual = frames.map((frame) => Math.min(...shifted.map((window) => meanAbsDiff(frame, window))));
    expect(Math.max(...residual)).toBeLessThan(3);
  }, 60_000);
});

describe('output shapes', () => {
  const short = async () => {
    const path = join(dir, 'short.wav');
    await exec('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', clip.songPath, '-t', '1', path]);
    return path;
  };

  for (const [aspect, size] of [
    ['square', [720, 720]],
    ['4:5', [720, 900]],
    ['9:16', [720, 1280]],
  ] as const) {
    it(`${aspect}: exactly ${size.join('×')}, with the whole face inside`, async () => {
      // A photo large enough for every shape at 720 px wide (1165×1400).
      const file = 'cat-01.jpg';
      const annotation = annotations[file]!;
      const result = await renderVideo({
        imagePath: join(PETS, file),
        audioPath: await short(),
        outputPath: join(dir, `shape-${aspect.replace(':', 'x')}.mp4`),
        thumbnailPath: join(dir, `shape-${aspect.replace(':', 'x')}.jpg`),
        watermark: false,
        aspect: aspect as VideoAspect,
        faceHints: { mouth: { x: annotation.mouth![0] / annotation.width, y: annotation.mouth![1] / annotation.height } },
        logger: testLogger,
      });
      expect([result.width, result.height]).toEqual(size);
      const { width, height } = await sharp(join(dir, `shape-${aspect.replace(':', 'x')}.jpg`)).metadata();
      expect([width, height]).toEqual(size);
      const margin = 0.02 * result.width;
      for (const point of [...annotation.eyes!, annotation.nose!, annotation.mouth!, annotation.chin!]) {
        const [x, y] = toFrame(result.framing, result.width, point);
        expect(x).toBeGreaterThan(margin);
        expect(x).toBeLessThan(result.width - margin);
        expect(y).toBeGreaterThan(margin);
        expect(y).toBeLessThan(result.height - margin);
      }
    }, 60_000);
  }

  it('never outgrows a small photo (its own resolution, the shown part at most twice enlarged): a smaller video of the same shape', async () => {
    const file = 'bird-01.jpg';
    const annotation = annotations[file]!;
    const result = await renderVideo({
      imagePath: join(PETS, file),
      audioPath: await short(),
      outputPath: join(dir, 'small.mp4'),
      thumbnailPath: join(dir, 'small.jpg'),
      watermark: false,
      aspect: '9:16',
      faceHints: { mouth: { x: annotation.mouth![0] / annotation.width, y: annotation.mouth![1] / annotation.height } },
      logger: testLogger,
    });
    expect(result.width / result.framing.width).toBeLessThanOrEqual(MAX_UPSCALE + 0.01);
    expect(result.width).toBeLessThanOrEqual(annotation.width);
    expect(result.width).toBeLessThan(720);
    expect([result.width % 2, result.height % 2]).toEqual([0, 0]);
    expect(result.height / result.width).toBeCloseTo(16 / 9, 1);
  }, 60_000);
});
