import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareJob } from '../src/render-pipeline.ts';
import { tempDir, writeSilence } from './helpers.ts';

/**
 * A wide photo in a tall frame (issue 36): the frame reaches past the photo's top and bottom, and the fill there must
 * meet the photo without a seam. The photo is a smooth vertical gradient (bright at the top, darker at the bottom),
 * so any step between two rows near where the photo ends is the fill's edge, not the photo's content.
 */
/** A face filling the photo's height, so a tall frame around it reaches past the photo's top and bottom. */
const FACE = { eyes: [{ x: 0.42, y: 0.3 }, { x: 0.58, y: 0.3 }] as [{ x: number; y: number }, { x: number; y: number }], nose: { x: 0.5, y: 0.55 }, mouth: { x: 0.5, y: 0.68 }, chin: { x: 0.5, y: 0.82 } };
/** The most the frame's mean grey may change from one row to the next around where the photo ends. */
const MAX_ROW_STEP = 4;

let dir: string;
let audioPath: string;
let imagePath: string;

beforeAll(async () => {
  dir = await tempDir('fill');
  audioPath = join(dir, 'silence.wav');
  await writeSilence(audioPath, 0.2);
  imagePath = join(dir, 'wide.png');
  const width = 1200;
  const height = 500;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) pixels.fill(Math.round(220 - (120 * y) / height), (y * width + x) * 3, (y * width + x) * 3 + 3);
  await sharp(pixels, { raw: { width, height, channels: 3 } }).png().toFile(imagePath);
}, 30_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the fill of a tall frame', () => {
  for (const aspect of ['9:16', '4:5'] as const) {
    it(`${aspect}: blends into the photo with no step between rows where the photo ends`, async () => {
      const job = await prepareJob({ imagePath, audioPath, width: 360, aspect, faceHints: FACE });
      const { width, height, data } = job.frame;
      const scale = height / job.framing.height;
      // Where the photo's top and bottom edges land in the frame.
      const edges = [-job.framing.top * scale, (500 - job.framing.top) * scale].filter((y) => y > 2 && y < height - 2);
      expect(edges.length, JSON.stringify(job.framing)).toBeGreaterThan(0);
      const rowMean = (y: number) => {
        let sum = 0;
        for (let x = 0; x < width; x++) sum += data[(y * width + x) * 3]!;
        return sum / width;
      };
      for (const edge of edges) {
        const around = Math.round(0.1 * height);
        let largest = 0;
        for (let y = Math.max(0, Math.round(edge) - around); y < Math.min(height - 1, Math.round(edge) + around); y++) largest = Math.max(largest, Math.abs(rowMean(y + 1) - rowMean(y)));
        expect(largest, `largest row-to-row step near the photo's edge at row ${edge.toFixed(0)} of ${height}`).toBeLessThanOrEqual(MAX_ROW_STEP);
      }
    });
  }
});
