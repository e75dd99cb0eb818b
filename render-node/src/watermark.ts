import sharp from 'sharp';
import type { Overlay } from './compositor.ts';

/** A paw-print badge (shapes only, no fonts needed) for the bottom-right corner of watermarked videos. */
function watermarkSvg(width: number, height: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 200 80">
  <rect x="2" y="2" width="196" height="76" rx="38" fill="#ffffff" fill-opacity="0.72"/>
  <g fill="#3a2a5c" fill-opacity="0.9">
    <ellipse cx="52" cy="50" rx="17" ry="14"/>
    <ellipse cx="32" cy="30" rx="7" ry="9"/><ellipse cx="46" cy="21" rx="7" ry="9"/>
    <ellipse cx="60" cy="21" rx="7" ry="9"/><ellipse cx="73" cy="30" rx="7" ry="9"/>
    <rect x="94" y="24" width="86" height="10" rx="5"/><rect x="94" y="44" width="62" height="10" rx="5"/>
  </g>
</svg>`;
}

export async function createWatermark(frameWidth: number, frameHeight: number): Promise<Overlay> {
  const width = Math.round(frameWidth * 0.24);
  const height = Math.round((width * 80) / 200);
  const margin = Math.round(frameWidth * 0.03);
  const { data, info } = await sharp(Buffer.from(watermarkSvg(width, height)))
    .resize(width, height)
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { left: frameWidth - info.width - margin, top: frameHeight - info.height - margin, width: info.width, height: info.height, rgba: data };
}
