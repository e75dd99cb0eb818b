import type { FaceHints } from '../contract.ts';

/** The sample pet drawing's natural size in pixels (it is square). */
export const SAMPLE_PET_SIZE = 512;

/**
 * The project's own sample pet: a cartoon dog drawn as SVG, so template previews and tests need no
 * third-party photo (and no licence for one). Shapes only, no text: render nodes need not have fonts
 * installed. Rasterise it with sharp (`sharp(Buffer.from(samplePetSvg())).png()` gives SAMPLE_PET_SIZE
 * pixels a side; render-node's renderSamplePet any size).
 */
export function samplePetSvg(options: { background?: boolean } = {}): string {
  const background = options.background ?? true;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${SAMPLE_PET_SIZE}" height="${SAMPLE_PET_SIZE}" viewBox="0 0 512 512">
  <defs>
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#e4eff8"/><stop offset="1" stop-color="#f4efe4"/>
    </linearGradient>
    <radialGradient id="fur" cx="0.45" cy="0.4" r="0.7">
      <stop offset="0" stop-color="#e0a45e"/><stop offset="1" stop-color="#b8732f"/>
    </radialGradient>
  </defs>
  ${background ? '<rect width="512" height="512" fill="url(#sky)"/>' : ''}
  <path d="M120 512 C 130 400, 180 352, 256 350 C 332 352, 382 400, 392 512 Z" fill="#c98a45"/>
  <path d="M212 360 C 230 420, 282 420, 300 360 Z" fill="#f1d2a8"/>
  <ellipse cx="128" cy="215" rx="48" ry="92" transform="rotate(18 128 215)" fill="#7a4520"/>
  <ellipse cx="384" cy="215" rx="48" ry="92" transform="rotate(-18 384 215)" fill="#7a4520"/>
  <ellipse cx="256" cy="228" rx="132" ry="128" fill="url(#fur)"/>
  <ellipse cx="256" cy="300" rx="78" ry="58" fill="#f3dcb8"/>
  <ellipse cx="206" cy="198" rx="16" ry="18" fill="#1d130c"/>
  <ellipse cx="306" cy="198" rx="16" ry="18" fill="#1d130c"/>
  <circle cx="211" cy="192" r="5" fill="#ffffff"/>
  <circle cx="311" cy="192" r="5" fill="#ffffff"/>
  <path d="M178 168 Q 206 150 232 164" stroke="#6b3b1a" stroke-width="6" fill="none" stroke-linecap="round"/>
  <path d="M280 164 Q 306 150 334 168" stroke="#6b3b1a" stroke-width="6" fill="none" stroke-linecap="round"/>
  <ellipse cx="256" cy="272" rx="27" ry="18" fill="#22150e"/>
  <ellipse cx="248" cy="266" rx="8" ry="4" fill="#5a4638"/>
  <path d="M256 290 L 256 312" stroke="#5b3a24" stroke-width="4" stroke-linecap="round"/>
  <path d="M224 314 Q 240 326 256 312 Q 272 326 288 314" stroke="#5b3a24" stroke-width="4" fill="none" stroke-linecap="round"/>
</svg>`;
}

/** Where the drawing's face is, as fractions of the picture: renders of it never depend on detection. */
export const SAMPLE_PET_FACE: FaceHints = {
  eyes: [
    { x: 206 / 512, y: 198 / 512 },
    { x: 306 / 512, y: 198 / 512 },
  ],
  nose: { x: 256 / 512, y: 272 / 512 },
  mouth: { x: 256 / 512, y: 314 / 512 },
  chin: { x: 256 / 512, y: 352 / 512 },
};
