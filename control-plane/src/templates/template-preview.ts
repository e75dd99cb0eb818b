import sharp from 'sharp';
import type { TemplateDefinition, TemplateLook } from './template-catalog.ts';

const previewSize = 512;

export function escapeSvgText(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

/** Splits a long name over two lines at the space nearest its middle, so it stays large enough to read. */
function titleLines(name: string): string[] {
  if (name.length <= 16) return [name];
  const middle = name.length / 2;
  let best = -1;
  for (let i = name.indexOf(' '); i !== -1; i = name.indexOf(' ', i + 1)) {
    if (best === -1 || Math.abs(i - middle) < Math.abs(best - middle)) best = i;
  }
  return best === -1 ? [name] : [name.slice(0, best), name.slice(best + 1)];
}

function title(name: string): string {
  const lines = titleLines(name);
  const longest = Math.max(...lines.map((line) => line.length));
  // DejaVu Sans Bold glyphs average about 0.62 em, leaving a margin of roughly 40 px a side.
  const fontSize = Math.min(46, Math.floor(430 / (longest * 0.62)));
  const firstBaseline = lines.length === 1 ? 78 : 58;
  return lines
    .map((line, index) => {
      const y = firstBaseline + index * (fontSize + 6);
      return `<text x="256" y="${y}" text-anchor="middle" font-family="DejaVu Sans, Verdana, sans-serif" font-weight="bold" font-size="${fontSize}" fill="#ffffff" stroke="#00000080" stroke-width="5" stroke-linejoin="round" paint-order="stroke">${escapeSvgText(line)}</text>`;
    })
    .join('\n');
}

function eighthNote(x: number, y: number, scale: number, rotation: number, colour: string): string {
  return `<g transform="translate(${x} ${y}) rotate(${rotation}) scale(${scale})" fill="${colour}">
    <ellipse cx="0" cy="0" rx="13" ry="9.5" transform="rotate(-20)"/>
    <rect x="9" y="-58" width="5" height="58"/>
    <path d="M14 -58 C 24 -48, 40 -42, 32 -18 C 34 -34, 24 -40, 14 -42 Z"/>
  </g>`;
}

function beamedNotes(x: number, y: number, scale: number, rotation: number, colour: string): string {
  return `<g transform="translate(${x} ${y}) rotate(${rotation}) scale(${scale})" fill="${colour}">
    <ellipse cx="0" cy="0" rx="13" ry="9.5" transform="rotate(-20)"/>
    <ellipse cx="44" cy="-8" rx="13" ry="9.5" transform="rotate(-20 44 -8)"/>
    <rect x="9" y="-58" width="5" height="58"/>
    <rect x="53" y="-66" width="5" height="58"/>
    <path d="M9 -58 L58 -66 L58 -54 L9 -46 Z"/>
  </g>`;
}

function singingMouth(cx: number, cy: number): string {
  return `<ellipse cx="${cx}" cy="${cy}" rx="24" ry="30" fill="#4a1520"/>
    <ellipse cx="${cx}" cy="${cy + 16}" rx="16" ry="11" fill="#ff7d93"/>`;
}

/** Dark lines on light fur and light lines on dark fur, so a black cat still has visible eyes. */
function inkFor(fur: string): string {
  const value = Number.parseInt(fur.slice(1, 7), 16);
  const luminance = 0.299 * ((value >> 16) & 0xff) + 0.587 * ((value >> 8) & 0xff) + 0.114 * (value & 0xff);
  return luminance < 100 ? '#fff4e0' : '#2b2b2b';
}

function happyEyes(y: number, spacing: number, ink: string): string {
  return [-1, 1]
    .map((side) => `<path d="M${256 + side * spacing - 18} ${y} Q ${256 + side * spacing} ${y - 20} ${256 + side * spacing + 18} ${y}" fill="none" stroke="${ink}" stroke-width="7" stroke-linecap="round"/>`)
    .join('\n');
}

function blush(y: number, spacing: number): string {
  return [-1, 1].map((side) => `<ellipse cx="${256 + side * spacing}" cy="${y}" rx="20" ry="12" fill="#ff8fa3" opacity="0.55"/>`).join('\n');
}

function catFace(look: TemplateLook): string {
  return `<g>
    <path d="M150 250 L165 120 L240 200 Z" fill="${look.fur}" stroke="#00000033" stroke-width="3"/>
    <path d="M362 250 L347 120 L272 200 Z" fill="${look.fur}" stroke="#00000033" stroke-width="3"/>
    <path d="M170 225 L176 152 L220 200 Z" fill="#ffb6c1"/>
    <path d="M342 225 L336 152 L292 200 Z" fill="#ffb6c1"/>
    <ellipse cx="256" cy="315" rx="135" ry="120" fill="${look.fur}" stroke="#00000033" stroke-width="3"/>
    <path d="M236 200 Q 256 230 276 200" fill="none" stroke="${look.accent}" stroke-width="6" stroke-linecap="round" opacity="0.7"/>
    ${happyEyes(290, 50, inkFor(look.fur))}
    ${blush(330, 80)}
    <path d="M246 318 L266 318 L256 330 Z" fill="#ff8fa3"/>
    ${singingMouth(256, 372)}
    <g stroke="${inkFor(look.fur)}" stroke-width="3" stroke-linecap="round" opacity="0.7">
      <line x1="150" y1="330" x2="80" y2="318"/><line x1="150" y1="345" x2="82" y2="350"/>
      <line x1="362" y1="330" x2="432" y2="318"/><line x1="362" y1="345" x2="430" y2="350"/>
    </g>
  </g>`;
}

function dogFace(look: TemplateLook): string {
  return `<g>
    <ellipse cx="256" cy="310" rx="130" ry="125" fill="${look.fur}" stroke="#00000033" stroke-width="3"/>
    <ellipse cx="140" cy="290" rx="42" ry="95" transform="rotate(18 140 290)" fill="${look.accent}" stroke="#00000033" stroke-width="3"/>
    <ellipse cx="372" cy="290" rx="42" ry="95" transform="rotate(-18 372 290)" fill="${look.accent}" stroke="#00000033" stroke-width="3"/>
    <ellipse cx="305" cy="262" rx="38" ry="32" fill="${look.accent}" opacity="0.6"/>
    ${happyEyes(270, 48, inkFor(look.fur))}
    <ellipse cx="256" cy="350" rx="78" ry="62" fill="#ffffff" opacity="0.55"/>
    ${blush(320, 86)}
    <ellipse cx="256" cy="318" rx="24" ry="16" fill="#2b2b2b"/>
    <ellipse cx="249" cy="312" rx="7" ry="4" fill="#ffffff" opacity="0.6"/>
    ${singingMouth(256, 372)}
  </g>`;
}

export function previewSvg(def: TemplateDefinition): string {
  const { look } = def;
  const face = look.animal === 'cat' ? catFace(look) : dogFace(look);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${previewSize}" height="${previewSize}" viewBox="0 0 512 512">
  <defs>
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="${look.backgroundTop}"/>
      <stop offset="1" stop-color="${look.backgroundBottom}"/>
    </linearGradient>
    <radialGradient id="spotlight" cx="0.5" cy="0.6" r="0.5">
      <stop offset="0" stop-color="#ffffff" stop-opacity="0.35"/>
      <stop offset="1" stop-color="#ffffff" stop-opacity="0"/>
    </radialGradient>
  </defs>
  <rect width="512" height="512" fill="url(#sky)"/>
  <circle cx="256" cy="310" r="230" fill="url(#spotlight)"/>
  ${eighthNote(62, 200, 1, -12, look.accent)}
  ${beamedNotes(400, 190, 0.9, 10, look.accent)}
  ${eighthNote(70, 440, 0.8, 8, look.accent)}
  ${eighthNote(450, 430, 0.75, -8, look.accent)}
  ${face}
  ${title(def.name)}
</svg>`;
}

/** A 512x512 PNG card: the template name, some musical notes and a singing cartoon pet. */
export function renderPreviewImage(def: TemplateDefinition): Promise<Buffer> {
  return sharp(Buffer.from(previewSvg(def))).png({ compressionLevel: 9 }).toBuffer();
}
