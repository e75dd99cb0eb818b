import type { Point } from './pet-face.ts';

export interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** A face's own axes in a frame of width × height: `right` across the face, `down` towards the chin. */
export interface FaceAxes {
  right: Point;
  down: Point;
  width: number;
  height: number;
}

/** The pixel rectangle (clipped to the frame) covering face-axis coordinates u × v around `origin`. */
export function boundsOf(axes: FaceAxes, [u0, u1]: [number, number], [v0, v1]: [number, number], origin: Point): Rect {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const u of [u0, u1]) {
    for (const v of [v0, v1]) {
      xs.push(origin[0] + u * axes.right[0] + v * axes.down[0]);
      ys.push(origin[1] + u * axes.right[1] + v * axes.down[1]);
    }
  }
  return clip(axes, { left: Math.floor(Math.min(...xs)), top: Math.floor(Math.min(...ys)), right: Math.ceil(Math.max(...xs)) + 1, bottom: Math.ceil(Math.max(...ys)) + 1 });
}

const clip = (frame: { width: number; height: number }, rect: Rect): Rect => ({
  left: Math.max(0, rect.left),
  top: Math.max(0, rect.top),
  right: Math.min(frame.width, rect.right),
  bottom: Math.min(frame.height, rect.bottom),
});

export const union = (rects: Rect[]): Rect => ({
  left: Math.min(...rects.map((r) => r.left)),
  top: Math.min(...rects.map((r) => r.top)),
  right: Math.max(...rects.map((r) => r.right)),
  bottom: Math.max(...rects.map((r) => r.bottom)),
});
