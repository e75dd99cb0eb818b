/**
 * npm run frames:species -- --out DIR [--pets DIR] [--petfaces DIR] [--size 360] [--aspect 9:16] [--points] [--strips DIR]
 *
 * What the owner sees on a phone, without encoding a video: for every photo of ../shared/pets and 20 held-out
 * photos of ../shared/petfaces (every species, a profile of each kind of mouth, mouths open in the photo), the
 * face as the pet-face model finds it with no hints, framed 9:16 (or --aspect) at phone size (--size wide),
 * drawn in silence (the photo's own mouth at rest), at full voice (a sung "ah") and on a held high note, side by
 * side in DIR/<photo>.png, the framing (whole-head or small-face) printed. --points marks the found landmarks on
 * the silent frame. --strips writes one strip per kind of mouth (docs/mouths/<kind>.jpg: the README shows them).
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { VideoAspect } from '@petsing/workflows';
import { loadAnnotations } from '../src/detect-evaluation.ts';
import { FaceRig, type RigPose } from '../src/face-rig.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import type { Point } from '../src/pet-face.ts';
import { prepareJob } from '../src/render-pipeline.ts';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { BLINK_EVERY, mouthKindOf, type MouthKind } from '../src/species-rig.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    pets: { type: 'string' },
    petfaces: { type: 'string' },
    size: { type: 'string', default: '360' },
    aspect: { type: 'string', default: '9:16' },
    points: { type: 'boolean', default: false },
    strips: { type: 'string' },
  },
});
if (!values.out) throw new Error('--out DIR is required');
const out = resolve(values.out);
const shared = join(import.meta.dirname, '../../../shared');
const petsDir = resolve(values.pets ?? join(shared, 'pets'));
const petfacesDir = resolve(values.petfaces ?? join(shared, 'petfaces'));
const size = Number(values.size);
const aspect = VideoAspect.parse(values.aspect);
await mkdir(out, { recursive: true });

/** Held-out photos to look at: per species, the first held-out photo of each (view, mouth open) asked for not shown already. */
const HELD_OUT_WANTED: Array<[string, string, boolean]> = [
  ['dog', 'frontal', false], ['dog', 'frontal', true], ['dog', 'profile', false], ['dog', 'three-quarter', true],
  ['cat', 'frontal', false], ['cat', 'profile', false], ['cat', 'three-quarter', true],
  ['bird', 'profile', false], ['bird', 'profile', true], ['bird', 'three-quarter', false], ['bird', 'profile', false],
  ['rabbit', 'frontal', false], ['rabbit', 'profile', false], ['rabbit', 'three-quarter', false],
  ['hamster', 'frontal', false], ['hamster', 'profile', false], ['hamster', 'three-quarter', false],
  ['guinea_pig', 'frontal', true], ['guinea_pig', 'profile', false], ['guinea_pig', 'three-quarter', false],
];

/** Per wanted (species, view, mouth open): the held-out photos that match, in the split's order (the first the model finds a face on is shown). */
async function heldOutCandidates(): Promise<string[][]> {
  const annotations = await loadAnnotations(petfacesDir);
  const listed = (await readFile(join(import.meta.dirname, '../models/held-out.txt'), 'utf8')).split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
  return HELD_OUT_WANTED.map(([species, view, open]) =>
    listed.filter((name) => {
      const a = annotations[name];
      return a?.species === species && a.view === view && Boolean(a.mouth_open) === open;
    }).map((name) => join(petfacesDir, 'images', name)),
  );
}

const detector = await bundledPetFaceModel();
const silence = join(out, '.audio.wav');
await writeSyntheticSong(silence, 0.2);
/**
 * Silence, full voice on an open vowel, and a held high note (the eyes narrowed as on any long loud note and the brows
 * lifted: expression.ts, brow-lift.ts; not on birds, whose lids are not drawn).
 */
const poses: Record<'silence' | 'full' | 'high', RigPose> = {
  silence: { open: 0, round: 0, blink: 0, headX: 0, headY: 0 },
  full: { open: 1, round: 0, blink: 0, headX: 0, headY: 0 },
  high: { open: 0.8, round: 0.3, blink: 0.35, brow: 1, headX: 0, headY: 0 },
};
const devAnnotations = await loadAnnotations(petsDir);
// Each entry: the photos to try in turn until the model finds a face on one.
const photos: string[][] = [
  ...Object.entries(devAnnotations).filter(([, a]) => a.species !== 'none').map(([file]) => [join(petsDir, file)]),
  ...(await heldOutCandidates()).filter((candidates) => candidates.length > 0),
];
const strips = new Map<MouthKind, Buffer[]>();
/** The strips' frame shape (the output shape; a small photo's frame is smaller but the same shape). */
let frameWidth = size;
let frameHeight = size;
const shown = new Set<string>();

for (const candidates of photos) {
  let job;
  let name = '';
  for (const path of candidates.filter((candidate) => !shown.has(candidate))) {
    name = basename(path).replace(/\.\w+$/, '');
    shown.add(path);
    try {
      job = await prepareJob({ imagePath: path, audioPath: silence, width: size, aspect, detector });
      break;
    } catch (error) {
      console.log(`${name.padEnd(48)} no face: ${(error as Error).message}`);
    }
  }
  if (!job) continue;
  const face = job.frameFace;
  const rig = new FaceRig({ frame: job.frame, face, blinks: true });
  const frames: Buffer[] = [];
  const lids = BLINK_EVERY[mouthKindOf(face.species)] !== null;
  for (const pose of Object.values(poses)) {
    const pixels = Buffer.alloc(job.frame.width * job.frame.height * 3);
    rig.render(lids ? pose : { ...pose, blink: 0, brow: 0 }, pixels);
    frames.push(pixels);
  }
  const { width, height } = job.frame;
  [frameWidth, frameHeight] = [width, height];
  const dot = (p: Point, color: string) => `<circle cx="${p[0]}" cy="${p[1]}" r="${Math.max(2, width / 160)}" fill="${color}"/>`;
  const marks = values.points
    ? [{ input: Buffer.from(`<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${[...face.eyes, face.nose, face.chin].map((p) => dot(p, '#ffd400')).join('')}${dot(face.mouth, '#ff2020')}</svg>`), left: 0, top: 0 }]
    : [];
  const gap = 8;
  const tiles = await Promise.all(frames.map((pixels, i) => sharp(pixels, { raw: { width, height, channels: 3 } }).composite(i === 0 ? marks : []).png().toBuffer()));
  const pair = await sharp({ create: { width: tiles.length * (width + gap) - gap, height, channels: 3, background: '#ffffff' } })
    .composite(tiles.map((input, i) => ({ input, left: i * (width + gap), top: 0 })))
    .png()
    .toBuffer();
  await sharp(pair).toFile(join(out, `${name}.png`));
  const kind = mouthKindOf(face.species);
  strips.set(kind, [...(strips.get(kind) ?? []), pair]);
  console.log(`${name.padEnd(48)} ${(face.species ?? '-').padEnd(10)} ${(face.view ?? '-').padEnd(13)} ${face.mouthOpen ? 'open in photo' : 'closed'}  ${kind.padEnd(6)} ${job.fit.padEnd(10)} → ${join(out, `${name}.png`)}`);
}
await rm(silence, { force: true });

if (values.strips) {
  // Each strip: up to four pets of one kind, in silence, at full voice and on a high note, 120 px wide frames.
  await mkdir(resolve(values.strips), { recursive: true });
  for (const [kind, pairs] of strips) {
    const tile = 120;
    const tileHeight = Math.round((tile * frameHeight) / frameWidth);
    const picked = pairs.filter((_, i) => i % Math.ceil(pairs.length / 4) === 0).slice(0, 4);
    const rowWidth = 3 * tile + 8;
    const rows = await Promise.all(picked.map((pair) => sharp(pair).resize(rowWidth, tileHeight, { fit: 'fill' }).png().toBuffer()));
    const strip = sharp({ create: { width: rows.length * rowWidth + (rows.length - 1) * 12, height: tileHeight, channels: 3, background: '#ffffff' } })
      .composite(rows.map((row, i) => ({ input: row, left: i * (rowWidth + 12), top: 0 })));
    await strip.jpeg({ quality: 82, mozjpeg: true }).toFile(join(resolve(values.strips), `${kind}.jpg`));
    console.log(`strip: ${join(resolve(values.strips), `${kind}.jpg`)} (${rows.length} pets)`);
  }
}
