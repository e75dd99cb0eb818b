import { decodeRegion } from '../../render-node/test/helpers.ts';

/** A point as fractions of a frame's width and height. */
export type FramePoint = { x: number; y: number };
/** How much each pixel changes over a video: its grey level's standard deviation across frames, row by row. */
export type MotionMap = { width: number; height: number; spread: Float64Array };

/** Decodes every frame of a `width`×`height` video as grey and measures how much each pixel moves. */
export async function motionMap(video: string, width: number, height: number): Promise<MotionMap> {
  const frames = await decodeRegion(video, { left: 0, top: 0, width, height });
  if (frames.length < 2) throw new Error(`${video} has ${frames.length} frame(s); motion needs at least two`);
  const sum = new Float64Array(width * height);
  const squares = new Float64Array(width * height);
  for (const frame of frames) {
    for (let i = 0; i < frame.length; i++) {
      sum[i]! += frame[i]!;
      squares[i]! += frame[i]! * frame[i]!;
    }
  }
  const spread = sum.map((total, i) => Math.sqrt(Math.max(0, squares[i]! / frames.length - (total / frames.length) ** 2)));
  return { width, height, spread };
}

/** Where one video moves more than the other: `a` minus `b`, pixel by pixel (same size). */
export function motionGain(a: MotionMap, b: MotionMap): MotionMap {
  return { ...a, spread: a.spread.map((value, i) => value - b.spread[i]!) };
}

/**
 * The centre of the strongest motion: the centroid of the `share` of pixels that change most, each weighted by
 * how far it exceeds the weakest of them, as fractions of the frame.
 */
export function motionCentre(map: MotionMap, share = 0.02): FramePoint {
  const ranked = [...map.spread].sort((a, b) => b - a);
  const floor = ranked[Math.max(0, Math.floor(ranked.length * share) - 1)]!;
  let weight = 0;
  let x = 0;
  let y = 0;
  map.spread.forEach((value, i) => {
    if (value <= floor) return;
    const w = value - floor;
    weight += w;
    x += w * ((i % map.width) + 0.5);
    y += w * (Math.floor(i / map.width) + 0.5);
  });
  if (weight === 0) throw new Error('no pixel moves more than the others');
  return { x: x / weight / map.width, y: y / weight / map.height };
}

export const distance = (a: FramePoint, b: FramePoint) => Math.hypot(a.x - b.x, a.y - b.y);
