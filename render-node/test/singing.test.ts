import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoAspect } from '@petsing/workflows';
import { MAX_UPSCALE } from '../src/framing.ts';
import { renderVideo } from '../src/render-pipeline.ts';
import { decodeRegion, decodeSamples, meanAbsDiff, tempDir, testLogger, writeSilence } from './helpers.ts';
import { boxAround, even, faceUnit, measureSinging, stillFrame, toFrame, windowOf, type Crop } from './render-measures.ts';
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
      const measured = await measureSinging(render, file, annotation, voice, FPS);
      expect(measured.frames).toBe(render.frames);
      expect(measured.mouthVersusVoice, 'mouth vs voice').toBeGreaterThanOrEqual(0.6);
      expect(measured.farCornerChange, 'far corner').toBeLessThan(3);
      expect(measured.furSharpness, 'mean fur sharpness').toBeGreaterThanOrEqual(0.9);
      expect(measured.furSharpness10th, 'fur sharpness, 10th percentile frame').toBeGreaterThanOrEqual(0.8);
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
