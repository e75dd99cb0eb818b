import sharp from 'sharp';
import type { RgbImage } from './image-decoder.ts';

/** The blurred fill around a photo that does not reach a tall frame's edges: its blur, as a share of the box's shorter side. */
const FILL_BLUR = 1 / 12;
/** The fill is dimmed this much, so the eye stays on the photo. */
const FILL_BRIGHTNESS = 0.75;
/** The photo fades into the fill over this share of the box's shorter side: no seam where they meet. */
const FILL_FEATHER = 0.08;

/**
 * The box of `image` as raw RGB. Where the box reaches past the photo (a shape the photo cannot fill around
 * the face), the margin shows the photo mirrored past its edges, blurred and dimmed, and the photo fades into
 * it over FILL_FEATHER: the mirror continues the photo's colours across its edge, so no seam shows.
 */
export async function cutOut(image: RgbImage, box: { left: number; top: number; width: number; height: number }): Promise<Buffer> {
  const raw = { raw: { width: image.width, height: image.height, channels: 3 as const } };
  const inside = {
    left: Math.max(0, box.left),
    top: Math.max(0, box.top),
    right: Math.min(image.width, box.left + box.width),
    bottom: Math.min(image.height, box.top + box.height),
  };
  const part = { left: inside.left, top: inside.top, width: inside.right - inside.left, height: inside.bottom - inside.top };
  const photo = await sharp(image.data, raw).extract(part).raw().toBuffer();
  if (part.width === box.width && part.height === box.height) return photo;
  const pad = { left: part.left - box.left, top: part.top - box.top, right: box.left + box.width - inside.right, bottom: box.top + box.height - inside.bottom };
  const short = Math.min(box.width, box.height);
  const partRaw = { raw: { width: part.width, height: part.height, channels: 3 as const } };
  // A mirror reaches at most the photo's own size past each edge; a wider margin repeats the mirrored edge.
  const mirrored = await sharp(photo, partRaw)
    .extend({ ...clampPad(pad, part.width, part.height), extendWith: 'mirror' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const backdrop = await sharp(mirrored.data, { raw: { width: mirrored.info.width, height: mirrored.info.height, channels: 3 } })
    .extend({ ...subtractPad(pad, part.width, part.height), extendWith: 'copy' })
    .blur(Math.max(2, short * FILL_BLUR))
    .linear(FILL_BRIGHTNESS, 0)
    .raw()
    .toBuffer();
  featherInto(backdrop, box.width, photo, part.width, part.height, pad, Math.max(2, short * FILL_FEATHER));
  return backdrop;
}

type Pad = { left: number; top: number; right: number; bottom: number };
const clampPad = (pad: Pad, width: number, height: number): Pad => ({
  left: Math.min(pad.left, width - 1),
  right: Math.min(pad.right, width - 1),
  top: Math.min(pad.top, height - 1),
  bottom: Math.min(pad.bottom, height - 1),
});
const subtractPad = (pad: Pad, width: number, height: number): Pad => {
  const mirrored = clampPad(pad, width, height);
  return { left: pad.left - mirrored.left, right: pad.right - mirrored.right, top: pad.top - mirrored.top, bottom: pad.bottom - mirrored.bottom };
};

/**
 * Draws `photo` into `backdrop` (both RGB; the photo at pad.left, pad.top), fading it out over `feather` pixels
 * towards each edge that meets the backdrop (an edge at the box's own border needs no fade).
 */
function featherInto(backdrop: Buffer, boxWidth: number, photo: Buffer, width: number, height: number, pad: Pad, feather: number): void {
  const ramp = (distance: number, open: boolean) => {
    if (!open) return 1;
    const t = Math.min(1, (distance + 0.5) / feather);
    return t * t * (3 - 2 * t);
  };
  for (let y = 0; y < height; y++) {
    const vertical = Math.min(ramp(y, pad.top > 0), ramp(height - 1 - y, pad.bottom > 0));
    const row = ((pad.top + y) * boxWidth + pad.left) * 3;
    for (let x = 0; x < width; x++) {
      const a = Math.min(vertical, ramp(x, pad.left > 0), ramp(width - 1 - x, pad.right > 0));
      const o = row + x * 3;
      const p = (y * width + x) * 3;
      if (a >= 1) {
        backdrop[o] = photo[p]!;
        backdrop[o + 1] = photo[p + 1]!;
        backdrop[o + 2] = photo[p + 2]!;
      } else {
        for (let c = 0; c < 3; c++) backdrop[o + c] = Math.round(backdrop[o + c]! + (photo[p + c]! - backdrop[o + c]!) * a);
      }
    }
  }
}
