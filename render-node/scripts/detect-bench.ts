/**
 * npm run bench:detect [-- --dir PATH] [--overlay DIR]
 * Runs the face detector on every photo of the annotated set (default ../shared/pets) and prints, per
 * photo and in total, the mouth error over the eye-midpoint-to-chin distance and how many no-pet
 * photos were refused. --overlay writes each photo with the found (red) and annotated (green) points.
 */
import { mkdir } from 'node:fs/promises';
import { resolve, join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { classicalFaceDetector } from '../src/face-detector.ts';
import { evaluateDetector, loadAnnotations, MOUTH_TOLERANCE, type PhotoResult } from '../src/detect-evaluation.ts';
import { loadOnnxFaceDetector } from '../src/onnx-detector.ts';
import type { Point } from '../src/pet-face.ts';

const { values } = parseArgs({ options: { dir: { type: 'string' }, overlay: { type: 'string' }, 'detector-model': { type: 'string' } } });
const dir = resolve(values.dir ?? join(import.meta.dirname, '../../../shared/pets'));
const modelPath = values['detector-model'] ?? process.env.RENDER_DETECTOR_MODEL_PATH;
const detector = modelPath ? await loadOnnxFaceDetector(modelPath) : classicalFaceDetector;
const results = await evaluateDetector(dir, detector);

console.log(`detector: ${detector.name}; photos: ${dir}`);
console.log(`${'photo'.padEnd(20)} ${'species'.padEnd(11)} ${'mouth err'.padStart(9)}  result`);
for (const r of results) {
  const error = r.mouthError === null ? '-' : r.mouthError.toFixed(2);
  const verdict =
    r.species === 'none'
      ? r.refused ? 'refused (ok)' : `FACE FOUND on a no-pet photo (confidence ${r.face?.confidence.toFixed(2)})`
      : r.mouthError === null ? `MISSED: ${r.reason}` : r.mouthError <= MOUTH_TOLERANCE ? 'ok' : 'MOUTH OFF';
  console.log(`${r.file.padEnd(20)} ${r.species.padEnd(11)} ${error.padStart(9)}  ${verdict}  (${r.ms.toFixed(0)} ms)`);
}
const pets = results.filter((r) => r.species !== 'none');
const within = pets.filter((r) => r.mouthError !== null && r.mouthError <= MOUTH_TOLERANCE).length;
const others = results.filter((r) => r.species === 'none');
const refused = others.filter((r) => r.refused).length;
const errors = pets.map((r) => r.mouthError ?? Infinity).sort((a, b) => a - b);
const median = errors[Math.floor(errors.length / 2)] ?? NaN;
console.log(`\npets: mouth within ${MOUTH_TOLERANCE} of the eye-to-chin distance on ${within}/${pets.length} (${((100 * within) / pets.length).toFixed(0)}%), median error ${median.toFixed(2)}`);
console.log(`no-pet photos refused: ${refused}/${others.length}`);
console.log(`decode + detection time: median ${results.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(results.length / 2)]!.toFixed(0)} ms a photo`);

if (values.overlay) await writeOverlays(values.overlay, results);

async function writeOverlays(target: string, rows: PhotoResult[]): Promise<void> {
  await mkdir(target, { recursive: true });
  const annotations = await loadAnnotations(dir);
  for (const row of rows) {
    const annotation = annotations[row.file]!;
    const { width, height } = annotation;
    const r = Math.max(3, Math.round(Math.max(width, height) / 150));
    const dot = (p: Point | undefined, colour: string) => (p ? `<circle cx="${p[0]}" cy="${p[1]}" r="${r}" fill="none" stroke="${colour}" stroke-width="${r / 2}"/>` : '');
    const marks: string[] = [];
    for (const p of [...(annotation.eyes ?? []), annotation.nose, annotation.mouth, annotation.chin]) marks.push(dot(p, '#00ff00'));
    if (row.face) {
      const f = row.face;
      for (const p of [...f.eyes, f.nose, f.chin, ...(f.mouthCorners ?? [])]) marks.push(dot(p, '#ffcc00'));
      marks.push(dot(f.mouth, '#ff0000'));
      marks.push(`<rect x="${f.head.left}" y="${f.head.top}" width="${f.head.width}" height="${f.head.height}" fill="none" stroke="#ffcc00" stroke-width="${r / 3}"/>`);
    }
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${marks.join('')}</svg>`;
    const photo = await sharp(join(dir, row.file)).rotate().toBuffer();
    const marked = await sharp(photo).composite([{ input: Buffer.from(svg) }]).png().toBuffer();
    await sharp(marked).resize(600, 600, { fit: 'inside' }).toFile(join(target, `${row.file}.png`));
  }
}
