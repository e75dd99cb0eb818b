/**
 * npm run bench:detect [-- --pets DIR] [--petfaces DIR] [--overlay DIR] [--no-turned] [--detector-model d.onnx]
 *
 * The pet-face model on ../shared/pets (the development set: mouth within tolerance, no-pet photos refused,
 * species) and on the held-out split of ../shared/petfaces (render-node/models/held-out.txt: the same figures
 * per species), with the time of decoding and of detection alone per photo, the model's load time and size.
 * --overlay writes each photo of the development set and --overlay-held-out (default 40) held-out
 * photos with the found points (red mouth, yellow others, the head box) beside the annotated ones (green).
 * Unless --no-turned, the held-out split is measured again turned a quarter turn and upside down.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { PetSpecies } from '@petsing/workflows';
import { evaluateDetector, figures, loadAnnotations, MOUTH_TOLERANCE, type PhotoResult } from '../src/detect-evaluation.ts';
import { loadOnnxFaceDetector } from '../src/onnx-detector.ts';
import { BUNDLED_FACE_MODEL, loadPetFaceModel } from '../src/pet-face-model.ts';
import type { Point } from '../src/pet-face.ts';

const { values } = parseArgs({
  options: {
    pets: { type: 'string' },
    petfaces: { type: 'string' },
    overlay: { type: 'string' },
    'overlay-held-out': { type: 'string', default: '40' },
    'detector-model': { type: 'string' },
    'no-turned': { type: 'boolean', default: false },
  },
});
const shared = join(import.meta.dirname, '../../../shared');
const petsDir = resolve(values.pets ?? join(shared, 'pets'));
const petfacesDir = resolve(values.petfaces ?? join(shared, 'petfaces'));
const custom = values['detector-model'] ?? process.env.RENDER_DETECTOR_MODEL_PATH;

const mark = performance.now();
const detector = custom ? await loadOnnxFaceDetector(custom) : await loadPetFaceModel();
const loadMs = performance.now() - mark;
const sizes = custom ? [(await stat(custom)).size] : await Promise.all(Object.values(BUNDLED_FACE_MODEL).map(async (path) => (await stat(path)).size));
console.log(`detector: ${detector.name}; ${(sizes.reduce((a, b) => a + b, 0) / 1e6).toFixed(1)} MB; loaded in ${loadMs.toFixed(0)} ms`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}\n`);

const pct = (n: number, d: number) => `${n}/${d} (${d ? ((100 * n) / d).toFixed(0) : '-'}%)`;

function printRows(results: PhotoResult[]): void {
  console.log(`${'photo'.padEnd(44)} ${'species'.padEnd(11)} ${'found'.padEnd(11)} ${'view'.padEnd(13)} ${'mouth err'.padStart(9)}  result`);
  for (const r of results) {
    const error = r.mouthError === null ? '-' : r.mouthError.toFixed(2);
    const verdict = r.species === 'none'
      ? r.refused ? 'refused (ok)' : `FACE FOUND on a no-pet photo (confidence ${r.face?.confidence.toFixed(2)})`
      : r.refused ? `REFUSED: ${r.reason}` : r.mouthError! <= MOUTH_TOLERANCE ? 'ok' : 'MOUTH OFF';
    const found = r.face?.species ?? '-';
    console.log(`${r.file.slice(0, 44).padEnd(44)} ${r.species.padEnd(11)} ${found.padEnd(11)} ${(r.face?.view ?? '-').padEnd(13)} ${error.padStart(9)}  ${verdict}`);
  }
}

function printFigures(label: string, results: PhotoResult[]): void {
  const all = figures(results);
  console.log(`\n${label}: pets with the mouth within ${MOUTH_TOLERANCE} of the eye-to-chin distance ${pct(all.mouthWithin, all.pets)}, median error ${all.medianMouthError.toFixed(2)}; species right ${pct(all.speciesRight, all.pets)}; pets refused ${pct(all.petsRefused, all.pets)}; no-pet photos refused ${pct(all.noPetRefused, all.noPet)}`);
  for (const species of PetSpecies.options) {
    const group = figures(results.filter((r) => r.species === species));
    if (group.pets === 0) continue;
    console.log(`  ${species.padEnd(11)} mouth within ${pct(group.mouthWithin, group.pets).padEnd(13)} median ${group.medianMouthError.toFixed(2)}  species right ${pct(group.speciesRight, group.pets).padEnd(13)} refused ${group.petsRefused}`);
  }
}

const percentile = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(p * list.length))] ?? NaN;

const dev = await evaluateDetector(petsDir, detector);
console.log(`== development set ${petsDir}`);
printRows(dev);
printFigures('development set', dev);

const heldOutFiles = (await readFile(join(import.meta.dirname, '../models/held-out.txt'), 'utf8')).split('\n').filter(Boolean);
const heldOut = await evaluateDetector(petfacesDir, detector, heldOutFiles);
console.log(`\n== held-out split of ${petfacesDir} (render-node/models/held-out.txt, never trained on)`);
printRows(heldOut);
printFigures('held-out split', heldOut);

if (!values['no-turned']) {
  for (const turns of [1, 2]) {
    const turned = await evaluateDetector(petfacesDir, detector, heldOutFiles, turns);
    printFigures(`held-out split turned ${90 * turns}° clockwise`, turned);
  }
}

const all = [...dev, ...heldOut];
const detectMs = all.map((r) => r.detectMs);
const decodeMs = all.map((r) => r.decodeMs);
console.log(`\ndetection alone: median ${percentile(detectMs, 0.5).toFixed(0)} ms, p90 ${percentile(detectMs, 0.9).toFixed(0)} ms, max ${Math.max(...detectMs).toFixed(0)} ms a photo (${all.length} photos)`);
console.log(`decoding the photo (render working copy, up to 3072 px): median ${percentile(decodeMs, 0.5).toFixed(0)} ms, p90 ${percentile(decodeMs, 0.9).toFixed(0)} ms`);

if (values.overlay) {
  await writeOverlays(values.overlay, petsDir, dev, '');
  // Evenly spread over the held-out list (sorted by name, so by species) to show every species.
  const every = heldOut.length / Math.min(heldOut.length, Number(values['overlay-held-out']));
  const shown = heldOut.filter((_, i) => Math.floor(i / every) !== Math.floor((i - 1) / every));
  await writeOverlays(values.overlay, petfacesDir, shown, 'images/');
  console.log(`overlays in ${values.overlay}`);
}
await detector.release?.();

async function writeOverlays(target: string, dir: string, rows: PhotoResult[], prefix: string): Promise<void> {
  await mkdir(target, { recursive: true });
  const annotations = await loadAnnotations(dir);
  for (const row of rows) {
    const annotation = annotations[row.file]!;
    const { width, height } = (await sharp(join(dir, prefix + row.file)).rotate().metadata()) as { width: number; height: number };
    const r = Math.max(3, Math.round(Math.max(width, height) / 150));
    const dot = (p: Point | undefined, colour: string) => (p ? `<circle cx="${p[0]}" cy="${p[1]}" r="${r}" fill="none" stroke="${colour}" stroke-width="${r / 2}"/>` : '');
    const marks: string[] = [];
    for (const p of [...(annotation.eyes ?? []), annotation.nose, annotation.mouth, annotation.chin]) marks.push(dot(p, '#00ff00'));
    const label = row.face ? `${row.face.species ?? ''} ${row.face.view ?? ''} ${row.face.mouthOpen ? 'open' : ''} ${row.face.confidence.toFixed(2)}` : 'refused';
    if (row.face) {
      const f = row.face;
      for (const p of [...f.eyes, f.nose, f.chin]) marks.push(dot(p, '#ffcc00'));
      marks.push(dot(f.mouth, '#ff0000'));
      marks.push(`<rect x="${f.head.left}" y="${f.head.top}" width="${f.head.width}" height="${f.head.height}" fill="none" stroke="#ffcc00" stroke-width="${r / 3}"/>`);
    }
    const font = Math.max(12, Math.round(Math.max(width, height) / 30));
    marks.push(`<text x="${font / 2}" y="${font * 1.2}" font-size="${font}" font-family="sans-serif" fill="#fff" stroke="#000" stroke-width="${font / 30}" paint-order="stroke">${row.file.slice(0, 40)}: ${label}</text>`);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${marks.join('')}</svg>`;
    const photo = await sharp(join(dir, prefix + row.file)).rotate().toBuffer();
    const marked = await sharp(photo).composite([{ input: Buffer.from(svg) }]).png().toBuffer();
    await sharp(marked).resize(600, 600, { fit: 'inside' }).toFile(join(target, `${row.file}.png`));
  }
}
