import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoAspect } from '@petsing/workflows';
import { frameFace } from '../src/framing.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import { detectInPhoto, type PetFace } from '../src/pet-face.ts';
import { PETS, type Annotation } from './pet-annotations.ts';
import { measureSinging, toFrame, type SingingMeasures } from './render-measures.ts';
import { singingPets, singPet, type SingingPets } from './sung-clip.ts';

/**
 * Every pet of shared/pets sung with no hints at all: the landmarks, species, view and open mouth are the
 * pet-face model's, and the mouth drawn is the species' own (a muzzle, a rodent's mouth, a beak). Measured
 * at the annotated landmarks, so a mouth drawn in the wrong place does not follow the voice where the real
 * mouth is. 480 px keeps fifteen renders quick; the 720 px renders are in singing.test.ts.
 */
const FPS = 25;
const WIDTH = 480;

let dir: string;
let setup: SingingPets;
let voice: Float32Array;
let annotations: Record<string, Annotation>;
let pets: string[];
const measured = new Map<string, SingingMeasures>();

beforeAll(async () => {
  setup = await singingPets('species');
  ({ dir, voice, annotations, pets } = setup);
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('every pet of shared/pets sings with its own mouth, from the model alone', () => {
  it('renders all fifteen: the mouth follows the voice on at least 13, the fur stays sharp and the background still on every one', async () => {
    const detector = await bundledPetFaceModel();
    for (const file of pets) {
      const { render } = await singPet(setup, file, detector, { width: WIDTH });
      measured.set(file, await measureSinging(render, file, annotations[file]!, voice, FPS));
    }
    const table = [...measured].map(([file, m]) => `${file}: r ${m.mouthVersusVoice.toFixed(2)}, fur ${m.furSharpness.toFixed(2)}, corner ${m.farCornerChange.toFixed(1)}`).join('\n');
    const following = [...measured.values()].filter((m) => m.mouthVersusVoice >= 0.6).length;
    expect(measured.size, table).toBe(15);
    expect(following, table).toBeGreaterThanOrEqual(13);
    for (const [file, m] of measured) {
      expect(m.furSharpness, `${file} mean fur sharpness\n${table}`).toBeGreaterThanOrEqual(0.9);
      expect(m.farCornerChange, `${file} far corner\n${table}`).toBeLessThan(3);
    }
  }, 600_000);
});

describe('framing from the model alone', () => {
  let found: Map<string, { face: PetFace; width: number; height: number }>;

  beforeAll(async () => {
    const detector = await bundledPetFaceModel();
    found = new Map();
    for (const file of pets) {
      const photo = await detectInPhoto(join(PETS, file), detector);
      if (photo.face) found.set(file, { face: photo.face, width: photo.width, height: photo.height });
    }
  }, 120_000);

  for (const aspect of ['square', '4:5', '9:16'] as VideoAspect[]) {
    it(`${aspect}: the whole head of every pet inside the frame (eyes, nose, mouth and chin with a margin; the jaw below the chin)`, () => {
      expect(found.size).toBe(15);
      for (const [file, { face, width, height }] of found) {
        const framing = frameFace(width, height, face, aspect, 720);
        const annotation = annotations[file]!;
        const [[x0, y0], [x1, y1]] = annotation.eyes!;
        const eyeMid: [number, number] = [(x0 + x1) / 2, (y0 + y1) / 2];
        const chin = annotation.chin!;
        // Below the chin by a fifth of the face: the jaw's underside, which an opening mouth moves.
        const underChin: [number, number] = [chin[0] + 0.2 * (chin[0] - eyeMid[0]), chin[1] + 0.2 * (chin[1] - eyeMid[1])];
        const margin = 0.03 * framing.width;
        for (const [label, point] of Object.entries({ leftEye: annotation.eyes![0], rightEye: annotation.eyes![1], nose: annotation.nose!, mouth: annotation.mouth!, chin, underChin })) {
          const [x, y] = toFrame(framing.crop, framing.width, point);
          const where = `${file} ${label} at ${x.toFixed(0)},${y.toFixed(0)} of ${framing.width}×${framing.height}`;
          expect(x, where).toBeGreaterThan(label === 'underChin' ? 0 : margin);
          expect(x, where).toBeLessThan(framing.width - (label === 'underChin' ? 0 : margin));
          expect(y, where).toBeGreaterThan(label === 'underChin' ? 0 : margin);
          expect(y, where).toBeLessThan(framing.height - (label === 'underChin' ? 0 : margin));
        }
      }
    });
  }
});
