/**
 * `npm run frames:band -- --out DIR [--sheet docs/mouths/band.jpg] [--width 720] [--aspect 9:16]`: what an
 * owner sees of a song over a band (issue 35). The made song of render-node/test/band-singing.test.ts (a band
 * throughout, a singer in verses 2.5-5.5 s and 7.5-10.5 s) goes through the real audio preparation (the separator),
 * and a cat, a dog and a bird of ../shared/pets (unhinted) are rendered with its stems, and once from the mix alone (as
 * before the stems drove the face). DIR gets every video and one PNG per moment: band only (the intro, the break),
 * sung (the singer's loudest frame of each verse), and the break rendered from the mix. --sheet writes them side by
 * side, a row per pet.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { LocalObjectStore } from '@petsing/platform/storage';
import type { VideoAspect } from '@petsing/workflows';
import { AudioPreparer } from '../../control-plane/src/media/audio-preparer.ts';
import { runMediaTool } from '../../control-plane/src/media/ffmpeg.ts';
import { VocalStems } from '../../control-plane/src/media/separator/vocal-stems.ts';
import { renderVideo } from '../../render-node/src/render-pipeline.ts';
import { frameEnvelope, makeSong, songWav } from '../support/song-mix.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, sheet: { type: 'string' }, width: { type: 'string', default: '720' }, aspect: { type: 'string', default: '9:16' } } });
if (!values.out) throw new Error('--out DIR is required');
const out = resolve(values.out);
const width = Number(values.width);
const aspect = values.aspect as VideoAspect;
const pets = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');
const PHOTOS = ['cat-01.jpg', 'dog-05.jpg', 'bird-02.jpg'];
const FPS = 25;
/** A tile of the contact sheet: a frame at 200 px wide (a phone's screen at about half its width). */
const TILE = 200;
await mkdir(out, { recursive: true });

const song = makeSong({ seconds: 12, verses: [[2.5, 5.5], [7.5, 10.5]] });
const objects = new LocalObjectStore({ root: join(out, 'objects'), publicBaseUrl: 'http://127.0.0.1', signingSecret: 'a-signing-secret-for-frames' });
const separator = new VocalStems(objects);
await objects.put('source', songWav(song), { contentType: 'audio/wav' });
const prepared = await new AudioPreparer(objects, 1, separator).prepare('source', { analysisKey: 'analysis.wav', deliveryKey: 'delivery.m4a' });
await separator.release();
const fetched = async (key: string, name: string) => {
  const path = join(out, name);
  await pipeline((await objects.get(key)).body, createWriteStream(path));
  return path;
};
const audioPath = await fetched('analysis.wav', 'analysis.wav');
const soundtrackPath = await fetched('delivery.m4a', 'delivery.m4a');
const vocalsPath = await fetched(prepared.stems!.vocalKey, 'vocals.wav');
const accompanimentPath = await fetched(prepared.stems!.accompanimentKey!, 'accompaniment.wav');

// The singer's loudest frame in each verse (away from its edges).
const voice = frameEnvelope(song.voice, song.sampleRate, FPS);
const loudest = (from: number, to: number) => {
  let best = Math.round(from * FPS);
  for (let f = best; f < Math.round(to * FPS); f++) if (voice[f]! > voice[best]!) best = f;
  return best / FPS;
};
const moments: Array<[string, number, 'stems' | 'mix']> = [
  ['intro, band only', 1.3, 'stems'],
  ['verse 1, sung', loudest(3, 5.3), 'stems'],
  ['break, band only', 6.5, 'stems'],
  ['verse 2, sung', loudest(8.3, 10.3), 'stems'],
  ['break, from the mix (before)', 6.5, 'mix'],
];

const rows: Buffer[][] = [];
for (const photo of PHOTOS) {
  const name = photo.replace(/\.\w+$/, '');
  const videos: Record<'stems' | 'mix', string> = { stems: join(out, `${name}.mp4`), mix: join(out, `${name}-mix.mp4`) };
  const common = { imagePath: join(pets, photo), audioPath, soundtrackPath, watermark: false, width, aspect, fps: FPS };
  const result = await renderVideo({ ...common, vocalsPath, accompanimentPath, outputPath: videos.stems, thumbnailPath: join(out, `${name}.jpg`) });
  await renderVideo({ ...common, outputPath: videos.mix, thumbnailPath: join(out, `${name}-mix.jpg`) });
  console.log(`${photo}: ${result.width}×${result.height}, sync ${JSON.stringify(result.sync)}`);
  const row: Buffer[] = [];
  for (const [label, t, source] of moments) {
    const png = join(out, `${name}-${t.toFixed(2)}-${source}.png`);
    await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-ss', t.toFixed(3), '-i', videos[source], '-frames:v', '1', png]);
    console.log(`  ${label} (${t.toFixed(2)} s): ${png}`);
    row.push(await readPng(png, label));
  }
  rows.push(row);
}

if (values.sheet) {
  const tile = await sharp(rows[0]![0]!).metadata();
  const [w, h] = [tile.width!, tile.height!];
  const composites = rows.flatMap((row, r) => row.map((input, c) => ({ input, left: c * w, top: r * h })));
  await sharp({ create: { width: w * moments.length, height: h * rows.length, channels: 3, background: '#000' } })
    .composite(composites)
    .jpeg({ quality: 78, mozjpeg: true })
    .toFile(resolve(values.sheet));
  console.log(`contact sheet: ${values.sheet}`);
}

/** A frame scaled to TILE px wide, labelled underneath. */
async function readPng(path: string, label: string): Promise<Buffer> {
  const scaled = await sharp(path).resize({ width: TILE }).png().toBuffer();
  const { height } = await sharp(scaled).metadata();
  const caption = Buffer.from(`<svg width="${TILE}" height="26"><rect width="${TILE}" height="26" fill="#111"/><text x="${TILE / 2}" y="18" font-family="sans-serif" font-size="12" fill="#fff" text-anchor="middle">${label}</text></svg>`);
  return await sharp({ create: { width: TILE, height: height! + 26, channels: 3, background: '#111' } })
    .composite([{ input: scaled, left: 0, top: 0 }, { input: caption, left: 0, top: height! }])
    .png()
    .toBuffer();
}

await writeFile(join(out, 'README.txt'), `Made by test/bench/band-frames.ts; moments: ${moments.map(([label, t]) => `${label} ${t.toFixed(2)} s`).join('; ')}\n`);
