import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headSize, MIN_FACE_SHARE, MIN_HEAD_SHARE } from '../src/framing.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import type { RenderResult } from '../src/render-pipeline.ts';
import type { Annotation } from './pet-annotations.ts';
import { faceUnit, measureOpening, measureSinging, type OpeningMeasures, type SingingMeasures } from './render-measures.ts';
import { singingPets, singPet, type SingingPets } from './sung-clip.ts';

/**
 * Issue 36: every pet of shared/pets sung in 9:16, as a phone shows it, with no hints at all (the face is the
 * pet-face model's), the voice as its own stem over a band. The head fills the frame unless the render says
 * small-face; the mouth's change follows the voice; at the loudest frames the mouth has visibly opened (a disc of
 * 0.3 eyes-to-chin around the annotated mouth differs from the silent frame by 22 grey levels on average). 360 px
 * wide (360×640) keeps fifteen renders quick; the share of the frame does not depend on the size.
 */
const FPS = 25;
const WIDTH = 360;
/** Pearson r the mouth window's change must reach against the voice's loudness. */
const MIN_R = 0.6;
/**
 * The fur above the eyes keeps at least this share of the first frame's fine detail (variance of the Laplacian; the
 * clip opens in silence, the face at rest), on average: singing resamples nothing. (Against the photo itself the
 * upscaler counts too: a 2× enlarged face, dog-03, measures 0.5 of the photo's detail in every frame.)
 */
const MIN_FUR_SHARPNESS = 0.9;
/** The frame's bottom corner away from the mouth (below the head in 9:16) changes by less than this (grey levels, any frame). */
const MAX_CORNER_CHANGE = 3;
/** Mean grey levels the mouth disc must change by at the loudest 5% of frames. */
const MIN_OPENING = 22;
/**
 * What is left of issue 36 (render-node/README.md, "Openings on a phone"): the pets whose opening does not yet reach
 * MIN_OPENING, each held to its present level less a margin so it cannot fall back unseen. bird-03 (14.5): the model finds
 * the hen's beak tip low and its mouth point towards the tip, so the gape its beak turns about lies up in the red face,
 * 0.4 face lengths from the real one, and the gap shows only near the tip.
 */
const STILL_SHORT: Record<string, number> = { 'bird-03.jpg': 12 };

let setup: SingingPets;
let dir: string;
let voice: Float32Array;
let annotations: Record<string, Annotation>;
let pets: string[];
const rendered = new Map<string, { result: RenderResult; opening: OpeningMeasures; singing: SingingMeasures }>();

beforeAll(async () => {
  setup = await singingPets('phone');
  ({ dir, voice, annotations, pets } = setup);
  const detector = await bundledPetFaceModel();
  for (const file of pets) {
    const { result, render } = await singPet(setup, file, detector, { width: WIDTH, aspect: '9:16', withVocals: true });
    rendered.set(file, { result, opening: await measureOpening(render, annotations[file]!, voice, FPS), singing: await measureSinging(render, file, annotations[file]!, voice, FPS) });
  }
}, 900_000);

afterAll(async () => {
  // PHONE_MEASURES=1 prints every pet's figures (render-node/README.md, "Openings on a phone").
  if (process.env.PHONE_MEASURES) console.error(table());
  if (dir) await rm(dir, { recursive: true, force: true });
});

function table(): string {
  return [...rendered]
    .map(([file, { result, opening, singing }]) => {
      const face = faceUnit(annotations[file]!) / result.framing.height;
      const head = headSize(result.face) / result.framing.height;
      return `${file}: ${result.fit}, eyes-to-chin ${(100 * face).toFixed(1)}%, head ${(100 * head).toFixed(0)}%, r ${opening.mouthVersusVoice.toFixed(2)}, opening ${opening.loudOpening.toFixed(1)}, fur ${singing.furSharpnessOverFirstFrame.toFixed(2)} of the first frame's (${singing.furSharpness.toFixed(2)} of the photo's), low corner ${singing.lowCornerChange.toFixed(1)}`;
    })
    .join('\n');
}

describe('every pet of shared/pets on a phone (9:16), from the model alone', () => {
  it('fills the frame: eyes to chin at least 11% of its height and the head at least 40%, unless the render says small-face', () => {
    expect(rendered.size, table()).toBe(15);
    for (const [file, { result }] of rendered) {
      expect(result.height / result.width).toBeCloseTo(16 / 9, 1);
      if (result.fit === 'small-face') continue;
      expect(faceUnit(annotations[file]!) / result.framing.height, `${file} eyes to chin\n${table()}`).toBeGreaterThanOrEqual(MIN_FACE_SHARE);
      expect(headSize(result.face) / result.framing.height, `${file} head\n${table()}`).toBeGreaterThanOrEqual(MIN_HEAD_SHARE['9:16']);
    }
  });

  it('opens with the voice: the mouth window follows it (r ≥ 0.6) and opens visibly at the loudest frames (≥ 22 grey levels on 14 of 15)', () => {
    for (const [file, { opening }] of rendered) {
      expect(opening.mouthVersusVoice, `${file} r\n${table()}`).toBeGreaterThanOrEqual(MIN_R);
      expect(opening.loudOpening, `${file} opening\n${table()}`).toBeGreaterThanOrEqual(STILL_SHORT[file] ?? MIN_OPENING);
    }
  });

  it('keeps the fur sharp (nothing resamples it) and the frame below the head still, on every one', () => {
    for (const [file, { singing }] of rendered) {
      expect(singing.furSharpnessOverFirstFrame, `${file} mean fur sharpness\n${table()}`).toBeGreaterThanOrEqual(MIN_FUR_SHARPNESS);
      expect(singing.lowCornerChange, `${file} low corner\n${table()}`).toBeLessThan(MAX_CORNER_CHANGE);
    }
  });
});
