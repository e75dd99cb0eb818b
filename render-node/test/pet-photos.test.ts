import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { evaluateDetector, MOUTH_TOLERANCE, type PhotoResult } from '../src/detect-evaluation.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import { decodeImage } from '../src/image-decoder.ts';
import { applyHints, faceLength, type PetFace, type Point } from '../src/pet-face.ts';
import { FaceRig } from '../src/face-rig.ts';
import { renderVideo } from '../src/render-pipeline.ts';
import { decodeRegion, run, tempDir, testLogger } from './helpers.ts';
import { loadAnnotations, PETS } from './pet-annotations.ts';

/**
 * Photos of shared/pets the pet-face model gets wrong, named one by one (npm run bench:detect shows the
 * errors): every other pet must have its mouth within the benchmark's tolerance and its species right. A
 * photo that starts passing should be taken off its list.
 */
const KNOWN_MOUTH_MISSES = new Set<string>([]);
const KNOWN_SPECIES_MISSES = new Set<string>([]);

let results: PhotoResult[];
let dir: string;

beforeAll(async () => {
  results = await evaluateDetector(PETS, await bundledPetFaceModel());
  dir = await tempDir('pets');
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the pet-face model on the real photos of shared/pets', () => {
  it('covers every annotated photo', async () => {
    expect(results.length).toBe(Object.keys(await loadAnnotations(PETS)).length);
  });

  it(`puts the mouth within ${MOUTH_TOLERANCE} face lengths on every pet except the named misses, and at least 13 of 15`, () => {
    const pets = results.filter((r) => r.species !== 'none');
    const missed = pets.filter((r) => !(r.mouthError !== null && r.mouthError <= MOUTH_TOLERANCE)).map((r) => r.file);
    expect(missed.filter((file) => !KNOWN_MOUTH_MISSES.has(file))).toEqual([]);
    expect(pets.length - missed.length).toBeGreaterThanOrEqual(13);
  });

  it('names the species of every pet except the named misses', () => {
    const wrong = results.filter((r) => r.species !== 'none' && r.face?.species !== r.species).map((r) => r.file);
    expect(wrong.filter((file) => !KNOWN_SPECIES_MISSES.has(file))).toEqual([]);
  });

  it('refuses every photo without a pet', () => {
    const none = results.filter((r) => r.species === 'none');
    expect(none.length).toBe(3);
    expect(none.filter((r) => !r.refused).map((r) => r.file)).toEqual([]);
  });

  it('reports every landmark inside or near the photo, eyes left to right, with a head box holding the face', () => {
    for (const { face, file } of results) {
      if (!face) continue;
      expect(face.eyes[0][0], file).toBeLessThanOrEqual(face.eyes[1][0]);
      const { left, top, width, height } = face.head;
      for (const [x, y] of [face.mouth, face.chin, face.nose, ...face.eyes]) {
        expect(x, file).toBeGreaterThanOrEqual(left);
        expect(x, file).toBeLessThanOrEqual(left + width);
        expect(y, file).toBeGreaterThanOrEqual(top);
        expect(y, file).toBeLessThanOrEqual(top + height);
      }
      expect(face.confidence, file).toBeGreaterThan(0);
      expect(face.confidence, file).toBeLessThanOrEqual(1);
      expect(['frontal', 'three-quarter', 'profile'], file).toContain(face.view);
      expect(typeof face.mouthOpen, file).toBe('boolean');
    }
  });
});

describe('render-node detect', () => {
  const cli = (args: string[]) => run('node', [join(import.meta.dirname, '..', 'bin', 'render-node.mjs'), 'detect', ...args]);

  it('--json prints exactly one JSON object with the landmarks in source pixels', async () => {
    const { stdout } = await cli(['--image', join(PETS, 'cat-02.jpg'), '--json']);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const { face } = JSON.parse(stdout) as { face: Record<string, unknown> };
    expect(Object.keys(face).sort()).toEqual(['chin', 'confidence', 'eyes', 'framing', 'head', 'mouth', 'mouth_corners', 'mouth_open', 'nose', 'species', 'view']);
    expect(face).toMatchObject({ species: 'cat', view: expect.stringMatching(/^(frontal|three-quarter|profile)$/), mouth_open: expect.any(Boolean), framing: 'whole-head' });
    const annotation = (await loadAnnotations(PETS))['cat-02.jpg']!;
    const [mx, my] = face.mouth as [number, number];
    // Source pixels of the 1280×1279 photo (not the detector's downscaled copy).
    expect(Math.hypot(mx - annotation.mouth![0], my - annotation.mouth![1])).toBeLessThan(60);
    expect(Object.keys(face.head as object).sort()).toEqual(['height', 'left', 'top', 'width']);
  });

  it('--json prints {"face": null} for a photo without a pet, with the model and providers that looked', async () => {
    const path = join(dir, 'grey.png');
    await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 120, g: 124, b: 118 } } }).png().toFile(path);
    for (const image of [path, join(PETS, 'other-03.jpg')]) {
      const { stdout } = await cli(['--image', image, '--json']);
      expect(JSON.parse(stdout), image).toEqual({ face: null, model: expect.stringMatching(/^detector-.+\+landmarks-.+$/), providers: ['cpu'] });
    }
  });
});

describe('a mouth the person points at', () => {
  /** Renders with the mouth at `mouth` (fractions of the photo) and returns where the frames move most, in source pixels. */
  async function movingCentre(imagePath: string, mouth: { x: number; y: number }, name: string): Promise<[number, number]> {
    const audioPath = join(dir, 'song.mp3');
    await writeSyntheticSong(audioPath, 3);
    const outputPath = join(dir, `${name}.mp4`);
    const size = 256;
    const result = await renderVideo({
      imagePath,
      audioPath,
      outputPath,
      thumbnailPath: join(dir, `${name}.jpg`),
      watermark: false,
      idleMotion: false,
      faceHints: { mouth },
      width: size,
      logger: testLogger,
    });
    const frames = await decodeRegion(outputPath, { left: 0, top: 0, width: size, height: size });
    // Per-pixel change from the first frame, summed over the clip: the mouth is what moves.
    const change = new Float64Array(size * size);
    for (const frame of frames) for (let i = 0; i < change.length; i++) change[i]! += Math.abs(frame[i]! - frames[0]![i]!);
    const threshold = Math.max(...change) * 0.5;
    let sx = 0;
    let sy = 0;
    let n = 0;
    change.forEach((value, i) => {
      if (value >= threshold) {
        sx += i % size;
        sy += Math.floor(i / size);
        n++;
      }
    });
    const scale = result.framing.width / size;
    return [result.framing.left + (sx / n) * scale, result.framing.top + (sy / n) * scale];
  }

  it('keeps the found eyes, nose and chin around a given mouth, and lets a contradicting hint win', () => {
    // A found face 100 px long (eye midpoint to chin) in a 400 × 400 photo.
    const found: PetFace = {
      confidence: 0.9, eyes: [[150, 150], [250, 150]], nose: [200, 200], mouth: [200, 230], mouthCorners: null, chin: [200, 250],
      head: { left: 100, top: 80, width: 200, height: 200 }, method: 'test', species: 'cat', view: 'frontal', mouthOpen: false,
    };
    const at = (x: number, y: number) => ({ x: x / 400, y: y / 400 });
    const near = applyHints(found, { mouth: at(205, 228) }, 400, 400);
    expect(near.mouth.map(Math.round)).toEqual([205, 228]);
    // The eyes, nose and chin stay where they were seen; nothing is invented.
    expect([near.eyes, near.nose, near.chin]).toEqual([found.eyes, found.nose, found.chin]);
    expect(near).toMatchObject({ eyesEstimated: false, species: 'cat', view: 'frontal', mouthOpen: false });
    // A mouth given below the found chin: the chin keeps its distance under the given mouth.
    const lower = applyHints(found, { mouth: at(200, 262) }, 400, 400);
    expect(lower.chin.map(Math.round)).toEqual([200, 282]);
    expect(lower.eyes).toEqual(found.eyes);
    // Given points are used exactly.
    const given = applyHints(found, { mouth: at(205, 228), eyes: [at(140, 150), at(260, 152)], chin: at(200, 270) }, 400, 400);
    expect([given.eyes[1].map(Math.round), given.chin.map(Math.round)]).toEqual([[260, 152], [200, 270]]);
    // No face agrees with the mouth: the rest is estimated, and no eyelids are drawn on estimated eyes.
    expect(applyHints(found, { mouth: at(380, 60) }, 400, 400)).toMatchObject({ eyesEstimated: true, method: 'given by the person' });
    expect(applyHints(null, { mouth: at(200, 230) }, 400, 400).eyesEstimated).toBe(true);
    // A given species wins over the model's, with or without a face around the mouth.
    expect(applyHints(found, { mouth: at(205, 228), species: 'rabbit' }, 400, 400).species).toBe('rabbit');
    expect(applyHints(null, { mouth: at(200, 230), species: 'bird' }, 400, 400).species).toBe('bird');
  });

  it('draws the mouth of the species: a muzzle for dogs and cats and faces without one, a rodent mouth, a beak', () => {
    const frame = { width: 400, height: 400, data: Buffer.alloc(400 * 400 * 3, 128) };
    const face: PetFace = {
      confidence: 0.9, eyes: [[150, 150], [250, 150]], nose: [200, 200], mouth: [200, 230], mouthCorners: null, chin: [200, 250],
      head: { left: 100, top: 80, width: 200, height: 200 }, method: 'test',
    };
    const kinds = (['dog', 'cat', 'rabbit', 'hamster', 'guinea_pig', 'bird', undefined] as const).map((species) => new FaceRig({ frame, face: { ...face, ...(species ? { species } : {}) }, blinks: false }).kind);
    expect(kinds).toEqual(['muzzle', 'muzzle', 'rodent', 'rodent', 'rodent', 'beak', 'muzzle']);
  });

  it('never draws a second opening into a mouth already open in the photo: the photo\'s own pixels move', () => {
    // A plain grey photo: any drawn mouth shows as pixels far from grey; moved fur stays grey.
    const frame = { width: 400, height: 400, data: Buffer.alloc(400 * 400 * 3, 128) };
    const face: PetFace = {
      confidence: 0.9, eyes: [[150, 150], [250, 150]], nose: [200, 200], mouth: [200, 230], mouthCorners: null, chin: [200, 260],
      head: { left: 100, top: 80, width: 200, height: 200 }, method: 'test',
    };
    const darkest = (mouthOpen: boolean, species: 'dog' | 'rabbit' | 'bird') => {
      const out = Buffer.alloc(400 * 400 * 3);
      new FaceRig({ frame, face: { ...face, species, mouthOpen }, blinks: false }).render({ open: 1, round: 0, blink: 0, headX: 0, headY: 0 }, out);
      return out.reduce((lowest, value) => Math.min(lowest, value), 255);
    };
    for (const species of ['dog', 'rabbit', 'bird'] as const) {
      expect(darkest(false, species), `${species}, closed in the photo`).toBeLessThan(80);
      expect(darkest(true, species), `${species}, open in the photo`).toBeGreaterThanOrEqual(126);
    }
  });

  it('finds the eyes and chin around a mouth the person points at, on a real pet', async () => {
    const model = await bundledPetFaceModel();
    for (const file of ['rabbit-01.jpg', 'hamster-02.jpg', 'dog-04.jpg']) {
      const annotation = (await loadAnnotations(PETS))[file]!;
      const image = await decodeImage(join(PETS, file));
      const scale = image.width / annotation.width;
      const mouth: Point = [annotation.mouth![0] * scale, annotation.mouth![1] * scale];
      const face = await model.detectAround(image, mouth, null);
      const unit = faceLength({ eyes: annotation.eyes!, chin: annotation.chin! }) * scale;
      const eyeMid = (f: Pick<PetFace, 'eyes'>): Point => [(f.eyes[0][0] + f.eyes[1][0]) / 2, (f.eyes[0][1] + f.eyes[1][1]) / 2];
      const annotated = { eyes: annotation.eyes!.map(([x, y]) => [x * scale, y * scale]) as [Point, Point] };
      expect(Math.hypot(eyeMid(face)[0] - eyeMid(annotated)[0], eyeMid(face)[1] - eyeMid(annotated)[1]) / unit, file).toBeLessThan(0.5);
      expect(Math.hypot(face.chin[0] - annotation.chin![0] * scale, face.chin[1] - annotation.chin![1] * scale) / unit, file).toBeLessThan(0.5);
    }
  });

  it('animates the photo where the hint says, wherever that is', async () => {
    const imagePath = join(PETS, 'dog-04.jpg');
    const annotation = (await loadAnnotations(PETS))['dog-04.jpg']!;
    const unit = Math.hypot(annotation.eyes![0][0] - annotation.chin![0], annotation.eyes![0][1] - annotation.chin![1]);
    for (const [name, point] of [
      ['annotated', { x: annotation.mouth![0] / annotation.width, y: annotation.mouth![1] / annotation.height }],
      ['elsewhere', { x: 0.7, y: 0.55 }],
    ] as const) {
      const [x, y] = await movingCentre(imagePath, point, name);
      // The jaw opens at the given point and below it.
      expect(Math.abs(x - point.x * annotation.width), name).toBeLessThan(0.25 * unit);
      expect(y - point.y * annotation.height, name).toBeGreaterThan(-0.1 * unit);
      expect(y - point.y * annotation.height, name).toBeLessThan(0.35 * unit);
    }
  }, 120_000);
});
