import { describe, expect, it } from 'vitest';
import { beakHingeFits, beakLine } from '../src/beak-hinge.ts';
import type { Point } from '../src/pet-face.ts';
import { BEAK } from '../src/species-rig.ts';

/**
 * Whether found points draw a beak that can hinge in the picture. The points are what the bundled pet-face model
 * finds with no hints on two photos of shared/pets, in the 384 px square frame (`npm run frames:species`).
 */
describe('a beak hinges only where its points draw one', () => {
  // The hen (bird-03), in profile: tip, mouth and chin along one beak.
  const hen = { eyes: [[130, 50], [133, 45]] as [Point, Point], nose: [260, 130] as Point, mouth: [228, 108] as Point, chin: [202, 111] as Point };
  // The cockatiel (bird-02), three-quarter with the beak pointing down: the tip found on the front of its head, the
  // chin on the real tip far below. Hinged about that line, the lower mandible swung out into the background.
  const cockatiel = { eyes: [[223, 154], [224, 142]] as [Point, Point], nose: [113, 187] as Point, mouth: [145, 196] as Point, chin: [160, 236] as Point };

  it('hinges a beak seen from the side, its chin within a mandible\'s depth of the beak line', () => {
    const line = beakLine(hen);
    expect(line.chinDepth).toBeLessThan(BEAK.depth[1] * line.length);
    expect(beakHingeFits(hen)).toBe(true);
  });

  it('does not hinge points whose chin lies deeper below the beak line than any lower mandible reaches', () => {
    const line = beakLine(cockatiel);
    expect(line.chinDepth).toBeGreaterThan(BEAK.depth[1] * line.length);
    expect(beakHingeFits(cockatiel)).toBe(false);
  });

  it('puts the lower mandible on the chin\'s side of the beak line, and the gape between the tip and the eyes', () => {
    const line = beakLine(hen);
    const toChin = [hen.chin[0] - line.gape[0], hen.chin[1] - line.gape[1]];
    expect(toChin[0]! * line.across[0] + toChin[1]! * line.across[1]).toBeGreaterThan(0);
    const toTip = [hen.nose[0] - line.gape[0], hen.nose[1] - line.gape[1]];
    expect(toTip[0]! * line.along[0] + toTip[1]! * line.along[1]).toBeCloseTo(line.length, 5);
  });
});
