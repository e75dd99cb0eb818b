import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { VideoAspect } from '@petsing/workflows';
import { frameFace } from '../src/framing.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import { detectInPhoto, type PetFace } from '../src/pet-face.ts';
import { loadAnnotations, PETS, type Annotation } from './pet-annotations.ts';
import { toFrame } from './render-measures.ts';

/**
 * Every pet of shared/pets framed with no hints at all: the landmarks are the pet-face model's, and the whole head
 * must be inside every shape. The renders of every pet, unhinted, are phone-singing.test.ts's (9:16, the mouth, the
 * fur and the background) and band-singing.test.ts's (over a band); the 720 px ones are singing.test.ts's.
 */
let annotations: Record<string, Annotation>;
let pets: string[];

beforeAll(async () => {
  annotations = await loadAnnotations(PETS);
  pets = Object.keys(annotations).filter((file) => annotations[file]!.species !== 'none');
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
