import type { PetSpecies } from '@petsing/workflows';
import type { PetFace } from './pet-face.ts';

/**
 * The three kinds of mouth the rig draws. A muzzle (dogs, cats) drops its jaw and shows a throat,
 * tongue and teeth; a rodent's mouth (rabbits, hamsters, guinea pigs) is a small opening under the
 * nose's "Y" with two incisors, the chin moving more than the opening grows; a beak hinges at its
 * gape and stays rigid.
 */
export type MouthKind = 'muzzle' | 'rodent' | 'beak';

const MOUTH_OF: Record<PetSpecies, MouthKind> = {
  dog: 'muzzle',
  cat: 'muzzle',
  bird: 'beak',
  rabbit: 'rodent',
  hamster: 'rodent',
  guinea_pig: 'rodent',
};

/** A face without a species (a custom detector, a face given point by point) gets the nearest common kind: a muzzle. */
export const mouthKindOf = (species: PetSpecies | undefined): MouthKind => (species ? MOUTH_OF[species] : 'muzzle');

/**
 * A jaw that drops (muzzles and rodents), in the face's own units: L is the eye-midpoint-to-chin length,
 * hw the mouth's half width. Chosen by looking at frames of the real pets (README, "Mouths by species").
 */
export interface JawProportions {
  /** Jaw drop at full opening, in L; never more than `maxDropPerJaw` of the jaw below the mouth. */
  maxDrop: number;
  maxDropPerJaw: number;
  /** The chin region always spans at least this much below the mouth, in L. */
  minJaw: number;
  /** From the lips' shape to the whole jaw's over this many jaw lengths, then the pull fades over `jawFade`. */
  jawBlend: number;
  jawFade: number;
  /** How far the lips part, as a share of the jaw's drop: under 1, the chin moves more than the opening grows. */
  lipShare: number;
  /** Upper lip lift as a share of the drop, fading out over `noseReach` mouth-to-nose distances above the mouth. */
  lift: number;
  noseReach: number;
  /** Share of the lift the whisker pads beside the opening take, where the jaw moves (a rodent's: its muzzle lifts whole). */
  padLift: number;
  /** The jaw moves as a whole out to `jawInner` half-widths, then fades by `jawEdge` (cheeks stay). */
  jawInner: number;
  jawEdge: number;
  /** Corners: open vowels spread the mouth, rounded ones draw it in. */
  spread: number;
  pucker: number;
  /**
   * A turned face's cheek side: its opening reaches `sideReach` half-widths in profile, and its lips' profile turns
   * by `sideWedge` (in profile) from an ellipse's to a wedge narrowing straight to the corner.
   */
  sideReach: number;
  sideWedge: number;
  /** The mouth's half width without corners found: `share` of the eye distance, within [min, max] of L. */
  halfWidth: { share: number; min: number; max: number };
  /** The opening sits at least this far below the nose (down the face, in L): a mouth point found on the nose moves down. */
  belowNose: number;
  /**
   * And at most this far (in L): a mouth point found further down (on the lower lip's underside or the chin, as on a
   * pug) moves up to there. The 95th percentile of the kind's annotated training faces (../shared/petfaces, held-out
   * photos left out): dogs 0.55 (cats 0.32), rabbits, hamsters and guinea pigs 0.27-0.36.
   */
  mostBelowNose: number;
}

/** A beak seen from the front or above drops its lower mandible like a jaw (the hinge's turn, foreshortened): `beak` here. */
export const JAW: Record<MouthKind, JawProportions> = {
  muzzle: {
    maxDrop: 0.34,
    maxDropPerJaw: 1.2,
    minJaw: 0.22,
    jawBlend: 1.2,
    jawFade: 1.6,
    lipShare: 1,
    lift: 0.15,
    noseReach: 0.7,
    padLift: 0,
    jawInner: 0.8,
    jawEdge: 2.6,
    spread: 0.15,
    pucker: 0.35,
    sideReach: 1.25,
    sideWedge: 0,
    halfWidth: { share: 0.33, min: 0.2, max: 0.35 },
    belowNose: 0,
    mostBelowNose: 0.55,
  },
  // A small mouth below the nose: the lower lip and chin drop, the split upper lip and the nose lift over
  // the incisors (a rabbit sings with its nose); the whisker pads follow.
  rodent: {
    maxDrop: 0.36,
    maxDropPerJaw: 1.2,
    minJaw: 0.26,
    jawBlend: 1.1,
    jawFade: 1.2,
    lipShare: 0.9,
    lift: 0.45,
    noseReach: 1.5,
    padLift: 0.6,
    jawInner: 1.4,
    jawEdge: 3,
    spread: 0.05,
    pucker: 0.15,
    // In profile a rodent's mouth opens along its visible side, widest at the front, hinged at the corner.
    sideReach: 2.2,
    sideWedge: 1,
    halfWidth: { share: 0.3, min: 0.2, max: 0.26 },
    belowNose: 0.14,
    mostBelowNose: 0.36,
  },
  // The lower mandible moves whole (no lips, no stretch across it); the feathers under it follow.
  beak: {
    maxDrop: 0.4,
    maxDropPerJaw: 1.2,
    minJaw: 0.2,
    jawBlend: 0.6,
    jawFade: 1.4,
    lipShare: 1,
    lift: 0.12,
    noseReach: 0.7,
    padLift: 0,
    jawInner: 1,
    jawEdge: 1.8,
    spread: 0,
    pucker: 0,
    sideReach: 1.25,
    sideWedge: 0,
    halfWidth: { share: 0.26, min: 0.18, max: 0.26 },
    belowNose: 0,
    // A bird's "nose" is its beak tip: no bound.
    mostBelowNose: Infinity,
  },
};

/** A beak seen from the side (it points across the face), in units of its length (gape to tip) and in radians. */
export const BEAK = {
  /** The gape (corner of the beak) sits this far from the tip towards the eyes, in eye-to-tip distances, and at least `minToMouth` tip-to-mouth distances. */
  gapeShare: 0.5,
  minToMouth: 1.3,
  /** The lower mandible's depth below the beak line, within these shares of the beak's length. */
  depth: [0.18, 0.55] as const,
  /** The lower mandible ends this short of the tip (a hooked upper beak overhangs it). */
  lowerLength: 0.92,
  /** The lower mandible turns down this far at full opening; the upper one lifts by `upperShare` of it. */
  maxAngle: (30 * Math.PI) / 180,
  upperShare: 0.25,
} as const;

/**
 * How a photo's own open mouth moves: in silence its lower lip rises over the opening by `rest` of the jaw's range,
 * and full voice opens it by the whole range past the photo's own opening (so it moves as far as a closed mouth
 * opens, and a little more). The lower jaw and tongue move as one piece below a band of `band` jaw lengths under the
 * opening's middle; `rest` × 1.2 (the jaw's largest range in jaws) × 1.5 (a smoothstep's steepest slope) stays under
 * `band`, so closing never folds the fur beside the corners.
 */
export const OPEN_IN_PHOTO = { rest: 0.5, band: 0.95 } as const;

/** The jaw's opening for a pose's `open` (0-1): below 0, a mouth open in the photo closing partly; never above 1. */
export const jawOpening = (open: number, face: Pick<PetFace, 'mouthOpen'>): number => (face.mouthOpen ? open * (1 + OPEN_IN_PHOTO.rest) - OPEN_IN_PHOTO.rest : open);

/** Seconds between blinks per kind of face; null: no blink is drawn (a bird's nictitating membrane is not a lid). */
export const BLINK_EVERY: Record<MouthKind, readonly [number, number] | null> = {
  muzzle: [2.6, 5.4],
  rodent: [7, 14],
  beak: null,
};
