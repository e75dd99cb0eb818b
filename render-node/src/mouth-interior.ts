import type { Point } from './pet-face.ts';
import { smoothstep } from './photo-sampler.ts';
import type { MouthKind } from './species-rig.ts';

const THROAT_DEEP = [22, 6, 9] as const;
const THROAT_EDGE = [96, 32, 40] as const;
const TONGUE = [205, 100, 112] as const;
const TEETH = [226, 218, 200] as const;
/** A bird's mouth: dark, with at most a thin pale tongue. */
export const BEAK_INSIDE = [34, 20, 24] as const;
export const BEAK_TONGUE = [170, 130, 122] as const;
/** Rodent incisors are ivory to yellow-orange (their enamel carries iron). */
const INCISORS = [236, 220, 176] as const;

/** The mouth's colours in the pet's own tones. */
export interface MouthColors {
  throatEdge: number[];
  tongue: number[];
  teeth: number[];
  incisors: number[];
}

/**
 * Colours from the muzzle around the mouth: its darkest quarter (the lips, a dark muzzle) tints the
 * throat and tongue, so a pug's black muzzle opens on a darker mouth than a collie's; its brightness
 * scales the tongue and teeth, so they sit in the photo's light.
 */
export function sampleMouthColors(source: Buffer, width: number, height: number, mouth: Point, length: number): MouthColors {
  const radius = Math.max(2, Math.round(0.12 * length));
  const samples: number[][] = [];
  for (let y = Math.round(mouth[1]) - radius; y <= Math.round(mouth[1]) + radius; y++) {
    for (let x = Math.round(mouth[0]) - radius; x <= Math.round(mouth[0]) + radius; x++) {
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      const o = (y * width + x) * 3;
      samples.push([source[o]!, source[o + 1]!, source[o + 2]!]);
    }
  }
  const luma = (c: number[]) => 0.299 * c[0]! + 0.587 * c[1]! + 0.114 * c[2]!;
  samples.sort((a, b) => luma(a) - luma(b));
  const darkest = samples.slice(0, Math.max(1, Math.floor(samples.length / 4)));
  const mean = (list: number[][], c: number) => list.reduce((sum, s) => sum + s[c]!, 0) / Math.max(1, list.length);
  const lip = [0, 1, 2].map((c) => mean(darkest, c));
  const brightness = Math.min(1.1, Math.max(0.6, mean(samples.map((s) => [luma(s)]), 0) / 140));
  // A dark muzzle darkens the mouth's edge more than a light one tints it.
  const lipWeight = 0.35 + 0.2 * (1 - smoothstep(40, 120, luma(lip)));
  return {
    throatEdge: THROAT_EDGE.map((value, c) => (1 - lipWeight) * value + lipWeight * lip[c]!),
    tongue: TONGUE.map((value, c) => (0.75 * value + 0.25 * lip[c]!) * brightness),
    teeth: TEETH.map((value) => Math.min(255, value * brightness)),
    incisors: INCISORS.map((value) => Math.min(255, value * brightness)),
  };
}

/**
 * The colour inside a muzzle's or rodent's opening, written to `into`: `across` is 0 at the middle and
 * 1 at a corner, `t` 0 under the upper lip and 1 on the lower one, `gap` the opening's height in pixels
 * and `pixelWidth` one pixel in units of `across`.
 */
export function interiorColor(kind: MouthKind, colors: MouthColors, across: number, t: number, gap: number, pixelWidth: number, into: Float64Array): void {
  if (kind === 'beak') {
    const shade = 0.55 + 0.45 * smoothstep(0.2, 1, across);
    for (let c = 0; c < 3; c++) into[c] = BEAK_INSIDE[c]! * shade;
    if (gap >= 4 && across < 0.6) mix(into, BEAK_TONGUE, Math.min(1, Math.max(0, ((t - 0.72) * gap) / 1.2)) * 0.7, 0.85);
    return;
  }
  const { throatEdge, tongue, teeth, incisors } = colors;
  const depth = Math.hypot(across, (t - 0.4) / 0.6);
  // Deep in the middle, lighter towards the cheeks, and in the upper lip's shadow at the top.
  const glow = smoothstep(0.3, 1.1, depth) * (0.45 + 0.55 * smoothstep(0, 0.4, t));
  for (let c = 0; c < 3; c++) into[c] = THROAT_DEEP[c]! + (throatEdge[c]! - THROAT_DEEP[c]!) * glow;
  if (kind === 'rodent') {
    // Two incisors hang from under the nose, split by a dark line, as soon as the lips part.
    if (gap >= 1.5 && across < 0.5) {
      const length = 0.5;
      const fromMiddle = across / Math.max(pixelWidth, 1e-6);
      const a = Math.min(1, Math.max(0, ((length - t) * gap) / 1.2)) * Math.min(1, Math.max(0, fromMiddle - 0.4)) * Math.min(1, Math.max(0, (0.5 - across) / pixelWidth));
      mix(into, incisors, a, 0.78 + 0.2 * (1 - t / length));
    }
    return;
  }
  if (gap >= 5) {
    const tongueTop = 0.45 + 0.35 * across * across;
    const a = Math.min(1, Math.max(0, ((t - tongueTop) * gap) / 1.5));
    if (a > 0) mix(into, tongue, a, (0.6 + 0.4 * smoothstep(tongueTop, 1, t)) * (1 - 0.35 * across * across));
  }
  if (gap >= 14) {
    const offCentre = Math.abs(across - 0.62) / 0.11;
    if (offCentre < 1) {
      const toothLength = 0.2 * (1 - offCentre);
      const a = 0.6 * Math.min(1, Math.max(0, ((toothLength - t) * gap) / 1.2));
      mix(into, teeth, a, 0.7 + 0.25 * (1 - t / Math.max(1e-3, toothLength)));
    }
  }
}

/** `into` moved `a` of the way towards `color` × `shade`. */
function mix(into: Float64Array, color: readonly number[], a: number, shade: number): void {
  for (let c = 0; c < 3; c++) into[c] = into[c]! + (color[c]! * shade - into[c]!) * a;
}
