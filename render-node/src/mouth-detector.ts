import type { RgbImage } from './image-decoder.ts';

/**
 * Where the pet's mouth is, in pixel coordinates of the image passed to the detector.
 * `upperLipY` is where a generated mouth hangs from; `faceWidth` sets the crop scale.
 */
export interface MouthRegion {
  centreX: number;
  upperLipY: number;
  faceWidth: number;
  /** The whole pet (the largest foreground object), used to frame the output. */
  subject: { left: number; top: number; width: number; height: number };
  /** 0-1; below 0.5 the mouth position was estimated from the head shape alone. */
  confidence: number;
  method: string;
}

export interface MouthDetector {
  readonly name: string;
  /** null when no usable pet face is found. */
  detect(image: RgbImage): Promise<MouthRegion | null>;
}

/** Why the default detector gave up, for the face_not_found hint and the doctor command. */
export class DetectionFailure {
  constructor(readonly reason: string) {}
}

const GRID_MAX_SIDE = 320;

interface Grid {
  width: number;
  height: number;
  scale: number; // image pixels per grid cell
  rgb: Float32Array;
  luma: Float32Array;
}

/** Box-averages the image down to at most 320 cells a side: fast, and it smooths fur texture. */
function toGrid(image: RgbImage): Grid {
  const scale = Math.max(1, Math.max(image.width, image.height) / GRID_MAX_SIDE);
  const width = Math.max(1, Math.round(image.width / scale));
  const height = Math.max(1, Math.round(image.height / scale));
  const rgb = new Float32Array(width * height * 3);
  const luma = new Float32Array(width * height);
  for (let gy = 0; gy < height; gy++) {
    const y0 = Math.floor((gy * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((gy + 1) * image.height) / height));
    for (let gx = 0; gx < width; gx++) {
      const x0 = Math.floor((gx * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((gx + 1) * image.width) / width));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let y = y0; y < y1; y++) {
        let i = (y * image.width + x0) * 3;
        for (let x = x0; x < x1; x++, i += 3) {
          r += image.data[i]!;
          g += image.data[i + 1]!;
          b += image.data[i + 2]!;
        }
      }
      const count = (y1 - y0) * (x1 - x0);
      const cell = gy * width + gx;
      rgb[cell * 3] = r / count;
      rgb[cell * 3 + 1] = g / count;
      rgb[cell * 3 + 2] = b / count;
      luma[cell] = (0.299 * r + 0.587 * g + 0.114 * b) / count;
    }
  }
  return { width, height, scale: image.width / width, rgb, luma };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Otsu's threshold over integer values 0-255. */
function otsu(values: Float32Array): number {
  const histogram = new Float64Array(256);
  for (const v of values) histogram[Math.min(255, Math.max(0, Math.round(v)))]!++;
  const total = values.length;
  let sumAll = 0;
  for (let i = 0; i < 256; i++) sumAll += i * histogram[i]!;
  let weightBack = 0;
  let sumBack = 0;
  let best = 0;
  let threshold = 0;
  for (let t = 0; t < 256; t++) {
    weightBack += histogram[t]!;
    if (weightBack === 0) continue;
    const weightFore = total - weightBack;
    if (weightFore === 0) break;
    sumBack += t * histogram[t]!;
    const meanBack = sumBack / weightBack;
    const meanFore = (sumAll - sumBack) / weightFore;
    const between = weightBack * weightFore * (meanBack - meanFore) ** 2;
    if (between > best) {
      best = between;
      threshold = t;
    }
  }
  return threshold;
}

/** 3×3 binary morphology; cells beyond the edge repeat the edge, so shapes running off the photo are not eaten. */
function morph(mask: Uint8Array, width: number, height: number, keepIf: (count: number) => boolean): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let count = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = Math.min(height - 1, Math.max(0, y + dy));
        for (let dx = -1; dx <= 1; dx++) {
          const xx = Math.min(width - 1, Math.max(0, x + dx));
          count += mask[yy * width + xx]!;
        }
      }
      out[y * width + x] = keepIf(count) ? 1 : 0;
    }
  }
  return out;
}

/**
 * Background colours: k-means (k=4, deterministic farthest-point start) over the cells along the
 * top, left and right edges; clusters holding at least 5% of those cells and showing on at least two
 * of the edges count. The bottom edge is left out because pets are usually cut off there.
 */
function backgroundColours(grid: Grid): Array<[number, number, number]> {
  const { width, height, rgb } = grid;
  const margin = Math.max(1, Math.round(Math.min(width, height) * 0.02));
  const samples: Array<[number, number, number]> = [];
  const sampleEdge: number[] = []; // 0 top, 1 left, 2 right
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const edge = y < margin ? 0 : x < margin ? 1 : x >= width - margin ? 2 : -1;
      if (edge >= 0) {
        const cell = y * width + x;
        samples.push([rgb[cell * 3]!, rgb[cell * 3 + 1]!, rgb[cell * 3 + 2]!]);
        sampleEdge.push(edge);
      }
    }
  }
  const distance = (a: readonly number[], b: readonly number[]) => Math.max(Math.abs(a[0]! - b[0]!), Math.abs(a[1]! - b[1]!), Math.abs(a[2]! - b[2]!));
  const centres: Array<[number, number, number]> = [samples[0]!];
  while (centres.length < 4) {
    let farthest = samples[0]!;
    let best = -1;
    for (const sample of samples) {
      const d = Math.min(...centres.map((c) => distance(c, sample)));
      if (d > best) {
        best = d;
        farthest = sample;
      }
    }
    if (best < 8) break;
    centres.push([...farthest]);
  }
  const assignment = new Int32Array(samples.length);
  for (let iteration = 0; iteration < 8; iteration++) {
    const sums = centres.map(() => [0, 0, 0, 0]);
    samples.forEach((sample, i) => {
      let nearest = 0;
      for (let c = 1; c < centres.length; c++) if (distance(centres[c]!, sample) < distance(centres[nearest]!, sample)) nearest = c;
      assignment[i] = nearest;
      const sum = sums[nearest]!;
      sum[0]! += sample[0];
      sum[1]! += sample[1];
      sum[2]! += sample[2];
      sum[3]!++;
    });
    sums.forEach((sum, c) => {
      if (sum[3]! > 0) centres[c] = [sum[0]! / sum[3]!, sum[1]! / sum[3]!, sum[2]! / sum[3]!];
    });
  }
  // A background colour surrounds the pet, so it shows on at least two of the three edges; a pet
  // touching the top edge puts its fur on one edge only.
  const edgeTotals = [0, 0, 0];
  for (const edge of sampleEdge) edgeTotals[edge]!++;
  const kept = centres.filter((_, c) => {
    const perEdge = [0, 0, 0];
    let count = 0;
    assignment.forEach((a, i) => {
      if (a === c) {
        perEdge[sampleEdge[i]!]!++;
        count++;
      }
    });
    const edges = perEdge.filter((n, edge) => n >= edgeTotals[edge]! * 0.05).length;
    return count >= samples.length * 0.05 && edges >= 2;
  });
  if (kept.length > 0) return kept;
  const counts = centres.map((_, c) => assignment.filter((a) => a === c).length);
  return [centres[counts.indexOf(Math.max(...counts))]!];
}

/** Marks enclosed background as subject: a pale muzzle close to the wall colour is still part of the head. */
function fillHoles(mask: Uint8Array, width: number, height: number): void {
  const outside = new Uint8Array(mask.length);
  const stack: number[] = [];
  for (let x = 0; x < width; x++) stack.push(x, (height - 1) * width + x);
  for (let y = 0; y < height; y++) stack.push(y * width, y * width + width - 1);
  while (stack.length > 0) {
    const cell = stack.pop()!;
    if (mask[cell] || outside[cell]) continue;
    outside[cell] = 1;
    const x = cell % width;
    if (x > 0) stack.push(cell - 1);
    if (x < width - 1) stack.push(cell + 1);
    if (cell >= width) stack.push(cell - width);
    if (cell < mask.length - width) stack.push(cell + width);
  }
  for (let cell = 0; cell < mask.length; cell++) if (!outside[cell]) mask[cell] = 1;
}

interface Component {
  cells: number[];
  left: number;
  top: number;
  right: number;
  bottom: number;
}

function components(mask: Uint8Array, width: number, height: number): Component[] {
  const label = new Int32Array(mask.length).fill(-1);
  const found: Component[] = [];
  const stack: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || label[start] !== -1) continue;
    const component: Component = { cells: [], left: width, top: height, right: 0, bottom: 0 };
    label[start] = found.length;
    stack.push(start);
    while (stack.length > 0) {
      const cell = stack.pop()!;
      component.cells.push(cell);
      const x = cell % width;
      const y = (cell - x) / width;
      component.left = Math.min(component.left, x);
      component.right = Math.max(component.right, x);
      component.top = Math.min(component.top, y);
      component.bottom = Math.max(component.bottom, y);
      const neighbours = [x > 0 ? cell - 1 : -1, x < width - 1 ? cell + 1 : -1, y > 0 ? cell - width : -1, y < height - 1 ? cell + width : -1];
      for (const next of neighbours) {
        if (next >= 0 && mask[next] && label[next] === -1) {
          label[next] = found.length;
          stack.push(next);
        }
      }
    }
    found.push(component);
  }
  return found;
}

interface Window {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * The largest solid patch of cells passing `test` inside the window whose centre is within
 * `maxOffAxis` of `axisX`. A nose is one solid patch; fur texture or noise gives many scattered
 * specks, so a patch holding under half of the matching cells does not count.
 */
function solidestBlob(grid: Grid, window: Window, test: (cell: number) => boolean, axisX: number, maxOffAxis: number, open: boolean): Component | undefined {
  const { width, height } = grid;
  const mask = new Uint8Array(width * height);
  for (let y = window.top; y <= window.bottom; y++) for (let x = window.left; x <= window.right; x++) if (test(y * width + x)) mask[y * width + x] = 1;
  // Opening drops the thin philtrum and lip lines that would otherwise join the nose to the mouth;
  // only worth it when the face spans enough cells for the nose to survive it.
  const blobs = components(open ? morph(morph(mask, width, height, (n) => n === 9), width, height, (n) => n >= 1) : mask, width, height);
  const total = blobs.reduce((sum, blob) => sum + blob.cells.length, 0);
  let best: Component | undefined;
  let bestScore = 0;
  for (const blob of blobs) {
    const offAxis = Math.abs((blob.left + blob.right) / 2 - axisX) / maxOffAxis;
    if (offAxis > 1 || blob.cells.length < 2 || blob.cells.length < total * 0.5) continue;
    const score = blob.cells.length * (1 - offAxis * 0.5);
    if (score > bestScore) {
      bestScore = score;
      best = blob;
    }
  }
  return best;
}

/**
 * Two dark, compact, similar patches side by side in the upper part of the head: the pupils (or eyes).
 * Eyebrow-like strokes also pair up, so the pair with the largest smaller member wins.
 */
function findEyePair(grid: Grid, head: Window, furLuma: number, headWidth: number): { axisX: number; eyeY: number; distance: number } | undefined {
  const { width, height, luma } = grid;
  const mask = new Uint8Array(width * height);
  const bottom = head.top + Math.round((head.bottom - head.top) * 0.7);
  // Pupils are the darkest things on a face: the darkest 2% of the head (plus a margin), and clearly darker than the fur.
  const headLuma: number[] = [];
  for (let y = head.top; y <= bottom; y++) for (let x = head.left; x <= head.right; x++) headLuma.push(luma[y * width + x]!);
  headLuma.sort((p, q) => p - q);
  const limit = Math.min(furLuma * 0.45, 90, (headLuma[Math.floor(headLuma.length * 0.02)] ?? 0) + 12);
  for (let y = head.top; y <= bottom; y++) for (let x = head.left; x <= head.right; x++) if (luma[y * width + x]! < limit) mask[y * width + x] = 1;
  const maxCells = (head.right - head.left + 1) * (head.bottom - head.top + 1) * 0.04;
  const blobs = components(mask, width, height).filter((blob) => {
    const boxArea = (blob.right - blob.left + 1) * (blob.bottom - blob.top + 1);
    return blob.cells.length >= 3 && blob.cells.length <= maxCells && blob.cells.length / boxArea >= 0.25;
  });
  const centre = (blob: Component) => ({ x: (blob.left + blob.right + 1) / 2, y: (blob.top + blob.bottom + 1) / 2 });
  let best: { axisX: number; eyeY: number; distance: number } | undefined;
  let bestSize = 0;
  for (let i = 0; i < blobs.length; i++) {
    for (let j = i + 1; j < blobs.length; j++) {
      const [a, b] = [blobs[i]!, blobs[j]!];
      const [ca, cb] = [centre(a), centre(b)];
      const dx = Math.abs(ca.x - cb.x);
      const dy = Math.abs(ca.y - cb.y);
      const small = Math.min(a.cells.length, b.cells.length);
      const ratio = Math.max(a.cells.length, b.cells.length) / small;
      if (ratio > 4 || dy > 0.12 * headWidth || dx < 0.15 * headWidth || dx > 0.6 * headWidth) continue;
      if (small > bestSize) {
        bestSize = small;
        best = { axisX: (ca.x + cb.x) / 2, eyeY: (ca.y + cb.y) / 2, distance: Math.hypot(dx, dy) };
      }
    }
  }
  return best && best.eyeY < height ? best : undefined;
}

/**
 * The last row of the nose proper: walking down from its widest row until the patch narrows below
 * 40%, so a philtrum and lip line hanging from it do not count as nose.
 */
function noseBottom(nose: Component, width: number): number {
  const rowWidths = new Map<number, number>();
  for (const cell of nose.cells) {
    const y = Math.floor(cell / width);
    rowWidths.set(y, (rowWidths.get(y) ?? 0) + 1);
  }
  let widestRow = nose.top;
  for (const [y, count] of rowWidths) if (count > (rowWidths.get(widestRow) ?? 0)) widestRow = y;
  const widest = rowWidths.get(widestRow) ?? 0;
  let bottom = widestRow;
  while (bottom < nose.bottom && (rowWidths.get(bottom + 1) ?? 0) >= widest * 0.4) bottom++;
  return bottom;
}

/**
 * The default detector: classical image analysis, no model. See render-node/README.md, "Detector".
 *  1. Background = the main colours along the top, left and right edges; the pet = cells whose colour
 *     differs from all of them by more than an Otsu threshold; the largest connected blob is the subject.
 *  2. The head is the top of the blob (at most 0.8 × its width tall), centred on the blob's upper rows.
 *  3. The nose is the darkest compact blob near the head's vertical axis in its lower part (pet noses
 *     are dark and central; eyes are dark too but sit off the axis, higher up). The upper lip is
 *     just under the nose. Without a clear nose, the mouth is placed at 72% of the head's height
 *     with confidence 0.3.
 */
export function detectMouthHeuristic(image: RgbImage): MouthRegion | DetectionFailure {
  const grid = toGrid(image);
  const { width, height, rgb, luma } = grid;

  const background = backgroundColours(grid);
  const distance = new Float32Array(width * height);
  for (let cell = 0; cell < distance.length; cell++) {
    let nearest = Infinity;
    for (const colour of background) {
      const d = Math.max(Math.abs(rgb[cell * 3]! - colour[0]), Math.abs(rgb[cell * 3 + 1]! - colour[1]), Math.abs(rgb[cell * 3 + 2]! - colour[2]));
      if (d < nearest) nearest = d;
    }
    distance[cell] = nearest;
  }
  // Otsu alone would split a plain background's noise in two; 28 levels is a visible colour step.
  const threshold = Math.max(otsu(distance), 28);
  let mask: Uint8Array<ArrayBuffer> = new Uint8Array(distance.length);
  for (let cell = 0; cell < distance.length; cell++) mask[cell] = distance[cell]! > threshold ? 1 : 0;
  mask = morph(morph(mask, width, height, (n) => n >= 5), width, height, (n) => n >= 1); // opening: drops specks
  mask = morph(morph(mask, width, height, (n) => n >= 1), width, height, (n) => n === 9); // closing: fills whiskers and gaps

  const blobs = components(mask, width, height).sort((a, b) => b.cells.length - a.cells.length);
  const subject = blobs[0];
  const area = width * height;
  if (!subject || subject.cells.length < area * 0.003) {
    return new DetectionFailure('no animal stands out from the background');
  }
  const runnerUp = blobs[1];
  if (runnerUp && runnerUp.cells.length > subject.cells.length * 0.6) {
    return new DetectionFailure('several objects of similar size; cannot tell which one is the pet');
  }
  const blobWidth = subject.right - subject.left + 1;
  const blobHeight = subject.bottom - subject.top + 1;
  if (blobWidth < 16 || blobHeight < 16) return new DetectionFailure('the pet is too small in the photo');
  const fill = subject.cells.length / (blobWidth * blobHeight);
  if (fill < 0.2) return new DetectionFailure('no compact animal shape found (only thin or scattered shapes)');

  const inSubject = new Uint8Array(area);
  for (const cell of subject.cells) inSubject[cell] = 1;
  fillHoles(inSubject, width, height);

  // Head: the top of the blob. A sitting pet is taller than wide, a lying one wider than tall.
  const headTop = subject.top;
  const headHeight = Math.max(8, Math.min(blobHeight, Math.round(blobWidth * 0.8)));
  const bandBottom = headTop + Math.max(2, Math.round(headHeight * 0.4));
  let sumX = 0;
  let countX = 0;
  for (let y = headTop; y < bandBottom; y++) {
    for (let x = subject.left; x <= subject.right; x++) {
      if (inSubject[y * width + x]) {
        sumX += x;
        countX++;
      }
    }
  }
  const headCentreX = countX > 0 ? sumX / countX : (subject.left + subject.right) / 2;
  // Head width: the widest row of the blob's upper three quarters of the head (ears included, which
  // only enlarges the crop), capped for lying pets whose body would otherwise count.
  let widest = 0;
  for (let y = headTop; y < headTop + Math.round(headHeight * 0.75) && y < height; y++) {
    let first = -1;
    let last = -1;
    for (let x = subject.left; x <= subject.right; x++) {
      if (inSubject[y * width + x]) {
        if (first < 0) first = x;
        last = x;
      }
    }
    if (first >= 0) widest = Math.max(widest, last - first + 1);
  }
  const headWidth = Math.max(8, Math.min(widest, Math.round(headHeight * 1.6)));

  const headBottom = Math.min(height - 1, headTop + headHeight - 1);
  const headLuma: number[] = [];
  const headRedness: number[] = [];
  for (let y = headTop; y <= headBottom; y++) {
    for (let x = subject.left; x <= subject.right; x++) {
      const cell = y * width + x;
      if (!inSubject[cell]) continue;
      headLuma.push(luma[cell]!);
      headRedness.push(rgb[cell * 3]! - rgb[cell * 3 + 1]!);
    }
  }
  const furLuma = median(headLuma);
  const furRedness = median(headRedness);
  const box = { left: subject.left, right: subject.right, top: headTop, bottom: headBottom };

  let nose: Component | undefined;
  let method: string;
  let upperLipGap: number;
  let faceWidth = headWidth;
  const eyes = findEyePair(grid, box, furLuma, headWidth);
  if (eyes) {
    // Eyes found: the nose is the distinct (dark, or pink like many cats') patch between and below them.
    const d = eyes.distance;
    const window = {
      left: Math.max(0, Math.round(eyes.axisX - 0.4 * d)),
      right: Math.min(width - 1, Math.round(eyes.axisX + 0.4 * d)),
      top: Math.max(0, Math.round(eyes.eyeY + 0.4 * d)),
      bottom: Math.min(height - 1, Math.round(eyes.eyeY + 1.5 * d)),
    };
    const distinct = (cell: number) =>
      luma[cell]! < furLuma * 0.6 || (rgb[cell * 3]! - rgb[cell * 3 + 1]! > furRedness + 45 && rgb[cell * 3]! > 110);
    nose = solidestBlob(grid, window, distinct, eyes.axisX, 0.4 * d, d >= 20);
    upperLipGap = 0.08 * d;
    faceWidth = Math.min(Math.max(headWidth, 2.2 * d), 3.6 * d);
    method = 'heuristic: background model, largest blob, eye pair, nose below the eyes';
  } else {
    // No eye pair: the nose is the darkest solid patch near the head's axis in its lower part.
    const window = {
      left: Math.max(0, Math.round(headCentreX - headWidth * 0.22)),
      right: Math.min(width - 1, Math.round(headCentreX + headWidth * 0.22)),
      top: headTop + Math.round(headHeight * 0.4),
      bottom: Math.min(height - 1, headTop + Math.round(headHeight * 0.92)),
    };
    const windowLuma: number[] = [];
    for (let y = window.top; y <= window.bottom; y++) for (let x = window.left; x <= window.right; x++) windowLuma.push(luma[y * width + x]!);
    const darkest = [...windowLuma].sort((p, q) => p - q)[Math.floor(windowLuma.length * 0.03)] ?? 255;
    const darkLimit = Math.min(darkest + 25, furLuma * 0.6);
    nose = solidestBlob(grid, window, (cell) => luma[cell]! <= darkLimit, headCentreX, headWidth * 0.12, false);
    upperLipGap = headWidth * 0.05;
    method = 'heuristic: background model, largest blob, dark nose on the head axis';
  }

  const s = grid.scale;
  // A blob running off three edges is scenery or an extreme close-up; only a visible nose makes it a pet.
  const edgesTouched = [subject.left === 0, subject.top === 0, subject.right === width - 1, subject.bottom === height - 1].filter(Boolean).length;
  if (!nose && (edgesTouched >= 3 || subject.cells.length > area * 0.7)) {
    return new DetectionFailure('the largest shape fills the photo edge to edge and has no recognisable muzzle');
  }
  // A small shape is only trusted with a nose: guessing a mouth on a distant blob renders garbage.
  if (!nose && subject.cells.length < area * 0.05) return new DetectionFailure('the pet is small in the photo and no muzzle was recognised');
  const subjectBox = { left: subject.left * s, top: subject.top * s, width: blobWidth * s, height: blobHeight * s };
  if (nose) {
    return {
      centreX: ((nose.left + nose.right + 1) / 2) * s,
      upperLipY: (noseBottom(nose, width) + 1 + upperLipGap) * s,
      faceWidth: faceWidth * s,
      subject: subjectBox,
      confidence: eyes ? 0.9 : 0.8,
      method,
    };
  }
  return {
    centreX: headCentreX * s,
    upperLipY: (headTop + headHeight * 0.72) * s,
    faceWidth: headWidth * s,
    subject: subjectBox,
    confidence: 0.3,
    method: 'heuristic: background model, largest blob, head proportions (no nose contrast)',
  };
}

export const heuristicMouthDetector: MouthDetector = {
  name: 'heuristic',
  async detect(image) {
    const result = detectMouthHeuristic(image);
    return result instanceof DetectionFailure ? null : result;
  },
};
