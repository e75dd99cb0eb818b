import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RenderSync } from '@petsing/workflows';
import { LocalObjectStore } from '@petsing/platform/storage';
import { AudioPreparer } from '../../control-plane/src/media/audio-preparer.ts';
import { VocalStems } from '../../control-plane/src/media/separator/vocal-stems.ts';
import { frameEnvelope, makeSong, songWav, type Song } from '../../test/support/song-mix.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import { renderVideo, type RenderVideoOptions } from '../src/render-pipeline.ts';
import { pearson, tempDir, testLogger } from './helpers.ts';
import { loadAnnotations, PETS, type Annotation } from './pet-annotations.ts';
import { headDrop, mouthWindowChange } from './render-measures.ts';

/**
 * A song over a band (issue 35): kick, snare, hi-hat, bass and a chord pad throughout, a synthesized singer in two
 * verses, instrumental before, between and after. It goes through the real audio preparation (the vocal separator,
 * once) and every pet of shared/pets, unhinted, through the real render pipeline with the stems: the mouth must follow
 * the voice alone (against the singer's own envelope, which the separator never saw) and rest while only the band
 * plays. 480 px keeps fifteen renders quick while a hen's beak still moves more than the encoder's noise.
 */
const FPS = 25;
const WIDTH = 480;
const VERSES = [[2.5, 5.5], [7.5, 10.5]] as const;
/** makeSong's band: a beat every 60/112 s, from 0. */
const BEAT_SECONDS = 60 / 112;
/** Frames this close to a verse are neither sung nor band-only (the mouth closes over 80 ms, the separator's edges). */
const EDGE_SECONDS = 0.3;
/** A frame is sung where the singer's envelope is above this share of its loud level (the tune's rests are not). */
const SUNG_SHARE = 0.1;

let dir: string;
let song: Song;
type SongFiles = Pick<RenderVideoOptions, 'audioPath' | 'soundtrackPath' | 'vocalsPath' | 'accompanimentPath'>;
let files: SongFiles;
let annotations: Record<string, Annotation>;
let pets: string[];

async function fetchObject(objects: LocalObjectStore, key: string, path: string): Promise<string> {
  await pipeline((await objects.get(key)).body, createWriteStream(path));
  return path;
}

/** Prepares a song as the control worker does (analysis copy, soundtrack, stems) and fetches the four files. */
async function prepare(name: string, made: Song): Promise<SongFiles> {
  const objects = new LocalObjectStore({ root: join(dir, `${name}-objects`), publicBaseUrl: 'http://127.0.0.1', signingSecret: 'a-signing-secret-for-tests' });
  const stems = new VocalStems(objects);
  try {
    await objects.put('source', songWav(made), { contentType: 'audio/wav' });
    const prepared = await new AudioPreparer(objects, 1, stems).prepare('source', { analysisKey: 'analysis.wav', deliveryKey: 'delivery.m4a' });
    if (!prepared.stems?.accompanimentKey) throw new Error(`the preparation made no stems: ${JSON.stringify(prepared)}`);
    return {
      audioPath: await fetchObject(objects, 'analysis.wav', join(dir, `${name}-analysis.wav`)),
      soundtrackPath: await fetchObject(objects, 'delivery.m4a', join(dir, `${name}-delivery.m4a`)),
      vocalsPath: await fetchObject(objects, prepared.stems.vocalKey, join(dir, `${name}-vocals.wav`)),
      accompanimentPath: await fetchObject(objects, prepared.stems.accompanimentKey, join(dir, `${name}-accompaniment.wav`)),
    };
  } finally {
    await stems.release();
  }
}

beforeAll(async () => {
  dir = await tempDir('band');
  song = makeSong({ seconds: 12, verses: VERSES });
  files = await prepare('song', song);
  annotations = await loadAnnotations(PETS);
  pets = Object.keys(annotations).filter((file) => annotations[file]!.species !== 'none');
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

describe('a song over a band: the pet sings the vocals, not the band', () => {
  it('on every pet of shared/pets, unhinted: the mouth follows the voice alone and rests while only the band plays', async () => {
    const detector = await bundledPetFaceModel();
    const voice = Array.from(frameEnvelope(song.voice, song.sampleRate, FPS));
    const loud = [...voice].sort((a, b) => a - b)[Math.floor(0.95 * voice.length)]!;
    const near = (frame: number, margin: number) => VERSES.some(([start, end]) => frame / FPS >= start - margin && frame / FPS < end + margin);
    const rows: string[] = [];
    const measured: Array<{ file: string; r: number; bandShare: number; sync: RenderSync | undefined }> = [];
    for (const file of pets) {
      const name = file.replace(/\.\w+$/, '');
      const path = join(dir, `${name}.mp4`);
      const result = await renderVideo({ ...files, imagePath: join(PETS, file), outputPath: path, thumbnailPath: join(dir, `${name}.jpg`), watermark: false, width: WIDTH, fps: FPS, detector, logger: testLogger });
      const change = await mouthWindowChange({ path, crop: result.framing, width: result.width, height: result.height }, annotations[file]!);
      const sung = change.filter((_, f) => near(f, 0) && (voice[f] ?? 0) > SUNG_SHARE * loud);
      // Band only: away from the verses, and after the reference frame (frame 10, the mouth closed).
      const bandOnly = change.filter((_, f) => f > 10 && !near(f, EDGE_SECONDS));
      const r = pearson(change, voice);
      const bandShare = mean(bandOnly) / mean(sung);
      measured.push({ file, r, bandShare, sync: result.sync });
      rows.push(`${file}: r ${r.toFixed(2)}, band-only ${bandShare.toFixed(2)} of the sung level (${mean(sung).toFixed(1)}), sync ${JSON.stringify(result.sync)}`);
    }
    const table = rows.join('\n');
    expect(measured.length, table).toBe(15);
    for (const { file, r, bandShare, sync } of measured) {
      expect(r, `${file} mouth vs voice\n${table}`).toBeGreaterThanOrEqual(0.6);
      expect(bandShare, `${file} band-only mouth\n${table}`).toBeLessThanOrEqual(0.35);
      expect(sync, `${file} sync report\n${table}`).toMatchObject({ vocalsFound: true });
      expect(sync!.mouthVoiceR, table).toBeGreaterThanOrEqual(0.6);
      expect(sync!.instrumentalRestShare, table).toBeGreaterThanOrEqual(0.9);
    }
  }, 600_000);

  it('an instrumental renders with the mouth at rest and the head keeping time, and says no singing was found', async () => {
    const instrumental = await prepare('instrumental', makeSong({ seconds: 8, verses: [] }));
    const file = 'cat-01.jpg';
    const path = join(dir, 'instrumental.mp4');
    const result = await renderVideo({ ...instrumental, imagePath: join(PETS, file), outputPath: path, thumbnailPath: join(dir, 'instrumental.jpg'), watermark: false, width: WIDTH, fps: FPS, logger: testLogger });
    expect(result.sync).toEqual({ vocalsFound: false, mouthVoiceR: null, instrumentalRestShare: 1 });
    const render = { path, crop: result.framing, width: result.width, height: result.height };
    // The mouth window changes by no more than the encoder's noise (a sung mouth moves it by 10-35 grey levels).
    expect(Math.max(...(await mouthWindowChange(render, annotations[file]!)))).toBeLessThan(2.5);
    // The head is lower on the beats than half-way between them.
    const drop = await headDrop(render, annotations[file]!);
    const onBeat = drop.filter((_, f) => Math.abs(((f / FPS + BEAT_SECONDS / 2) % BEAT_SECONDS) - BEAT_SECONDS / 2) < 0.5 / FPS);
    const offBeat = drop.filter((_, f) => Math.abs(((f / FPS) % BEAT_SECONDS) - BEAT_SECONDS / 2) < 0.5 / FPS);
    expect(mean(onBeat) - mean(offBeat), `head drop on the beats ${mean(onBeat).toFixed(2)} px, between them ${mean(offBeat).toFixed(2)} px`).toBeGreaterThanOrEqual(0.5);
  }, 120_000);
});
