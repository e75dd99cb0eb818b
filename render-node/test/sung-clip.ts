import { join } from 'node:path';
import type { VideoAspect } from '@petsing/workflows';
import type { FaceDetector } from '../src/pet-face.ts';
import { renderVideo } from '../src/render-pipeline.ts';
import { decodeSamples, run, tempDir, testLogger } from './helpers.ts';
import { loadAnnotations, PETS, type Annotation } from './pet-annotations.ts';

/** Sung phrases (espeak-ng at set pitches) with pauses between them. */
const PHRASES = ['la la la loo, la la la', 'oh my little friend, sing along', 'ah ee oh, ah ee oh, ooh'];
const PAUSE_SECONDS = 1.5;

export interface SungClip {
  /** The voice alone (what the mouth should follow). */
  voicePath: string;
  /** The voice over a steady accompaniment (bass and hi-hat) that also plays through the pauses. */
  songPath: string;
  seconds: number;
}

/**
 * A sung clip with pauses, over an accompaniment that never stops: the render must follow the voice,
 * not the band. Written as 16 kHz mono WAV files into `dir`.
 */
export async function writeSungClip(dir: string): Promise<SungClip> {
  const parts: string[] = [];
  for (const [index, text] of PHRASES.entries()) {
    const path = join(dir, `phrase-${index}.wav`);
    await run('espeak-ng', ['-v', 'en', '-s', '130', '-p', String(40 + 15 * index), '-w', path, text]);
    parts.push(path);
  }
  const voicePath = join(dir, 'voice.wav');
  // A pause first too, so the clip starts in silence (input 0); then each phrase followed by a pause.
  const chain = parts.map((_, i) => `[${i + 1}:a]aresample=16000,aformat=channel_layouts=mono,apad=pad_dur=${PAUSE_SECONDS}[p${i + 1}]`);
  const labels = ['[0:a]', ...parts.map((_, i) => `[p${i + 1}]`)].join('');
  const graph = `${chain.join(';')};${labels}concat=n=${parts.length + 1}:v=0:a=1[out]`;
  const inputs = parts.flatMap((path) => ['-i', path]);
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `anullsrc=r=16000:cl=mono:d=${PAUSE_SECONDS}`, ...inputs, '-filter_complex', graph, '-map', '[out]', '-ar', '16000', '-ac', '1', voicePath]);
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', voicePath]);
  const seconds = Number(stdout.trim());
  const songPath = join(dir, 'song.wav');
  const band =
    `sine=f=55:r=16000:d=${seconds},volume=0.25,tremolo=f=2:d=0.9[bass];` +
    `anoisesrc=r=16000:d=${seconds}:c=white:a=0.3,highpass=f=6000,volume=0.4,tremolo=f=4:d=1[hat];` +
    `[bass][hat]amix=inputs=2:normalize=0[band];[0:a][band]amix=inputs=2:normalize=0[mix]`;
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', voicePath, '-filter_complex', band, '-map', '[mix]', '-ar', '16000', '-ac', '1', songPath]);
  return { voicePath, songPath, seconds };
}

/** What the tests that sing every pet of shared/pets share: a temporary folder with the sung clip, its voice as samples, and the pets. */
export interface SingingPets {
  dir: string;
  clip: SungClip;
  voice: Float32Array;
  annotations: Record<string, Annotation>;
  /** The photos of shared/pets that show a pet. */
  pets: string[];
}

export async function singingPets(prefix: string): Promise<SingingPets> {
  const dir = await tempDir(prefix);
  const clip = await writeSungClip(dir);
  const voice = await decodeSamples(clip.voicePath);
  const annotations = await loadAnnotations(PETS);
  const pets = Object.keys(annotations).filter((file) => annotations[file]!.species !== 'none');
  return { dir, clip, voice, annotations, pets };
}

/**
 * Sings `file` of shared/pets unhinted (the face is `detector`'s) over the clip's song, into the setup's folder: the
 * render's result and the video as the measures take it.
 */
export async function singPet(setup: SingingPets, file: string, detector: FaceDetector, options: { width: number; aspect?: VideoAspect; withVocals?: boolean }) {
  const path = join(setup.dir, `${file.replace(/\.\w+$/, '')}.mp4`);
  const result = await renderVideo({
    imagePath: join(PETS, file),
    audioPath: setup.clip.songPath,
    ...(options.withVocals ? { vocalsPath: setup.clip.voicePath } : {}),
    outputPath: path,
    thumbnailPath: path.replace(/\.mp4$/, '.jpg'),
    watermark: false,
    width: options.width,
    ...(options.aspect ? { aspect: options.aspect } : {}),
    detector,
    logger: testLogger,
  });
  return { result, render: { path, crop: result.framing, width: result.width, height: result.height } };
}

/** A low phrase, a pause and a high phrase (espeak-ng at two pitches, an octave apart), with silence before and after. */
export interface LowHighClip {
  path: string;
  /** Seconds: where each phrase's audio starts and ends (espeak-ng's own short silences at its ends included). */
  low: [number, number];
  high: [number, number];
  seconds: number;
}

const LOW_HIGH = { lead: 1, pause: 1.2, tail: 1, lowPitch: 40, highPitch: 99 } as const;

/** Writes a LowHighClip (16 kHz mono WAV) into `dir`. */
export async function writeLowHighClip(dir: string): Promise<LowHighClip> {
  const duration = async (path: string) => Number((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path])).stdout.trim());
  const low = join(dir, 'low.wav');
  const high = join(dir, 'high.wav');
  await run('espeak-ng', ['-v', 'en', '-s', '130', '-p', String(LOW_HIGH.lowPitch), '-w', low, 'la la la loo, la la la, oh my friend']);
  await run('espeak-ng', ['-v', 'en', '-s', '130', '-p', String(LOW_HIGH.highPitch), '-w', high, 'ah ee oh, ah ee ooh']);
  const [lowSeconds, highSeconds] = [await duration(low), await duration(high)];
  const path = join(dir, 'low-high.wav');
  const silence = (seconds: number) => ['-f', 'lavfi', '-t', String(seconds), '-i', 'anullsrc=r=16000:cl=mono'];
  const graph = '[1:a]aresample=16000,aformat=channel_layouts=mono[l];[3:a]aresample=16000,aformat=channel_layouts=mono[h];[0:a][l][2:a][h][4:a]concat=n=5:v=0:a=1[out]';
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...silence(LOW_HIGH.lead), '-i', low, ...silence(LOW_HIGH.pause), '-i', high, ...silence(LOW_HIGH.tail), '-filter_complex', graph, '-map', '[out]', '-ar', '16000', '-ac', '1', path]);
  const highStart = LOW_HIGH.lead + lowSeconds + LOW_HIGH.pause;
  return { path, low: [LOW_HIGH.lead, LOW_HIGH.lead + lowSeconds], high: [highStart, highStart + highSeconds], seconds: highStart + highSeconds + LOW_HIGH.tail };
}
