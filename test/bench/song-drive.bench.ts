/**
 * `npx tsx test/bench/song-drive.bench.ts [-- --seconds 30 --rounds 9]`: what the render's own analysis of a song costs
 * (issue 35): the voice track of the mix alone (what the render did before stems), the same through driveFromSong
 * without stems (the voice activity and the sync report on top), and with the vocal and accompaniment stems (the
 * voice activity gating the mouth, the beat tracker, the sync report); and the beat tracker alone. The song is
 * test/support/song-mix.ts's (a band throughout, a singer in two verses), its parts standing for the separator's
 * stems, all as mono 16 kHz like the analysis copy and the stems. Prints the first call of the process (what a
 * render node's first render pays, the code not yet optimised) and the median of the rest, in milliseconds.
 * With --render, then whole renders of the same song (dog-01.jpg, 720 px square, the service's defaults) from the
 * analysis copy alone and with the stems, alternating: the medians of their decode, features and total stage times.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runMediaTool } from '../../control-plane/src/media/ffmpeg.ts';
import type { DecodedAudio } from '../../render-node/src/audio-decoder.ts';
import { trackBand } from '../../render-node/src/beat-tracker.ts';
import { renderVideo, type StageTimings } from '../../render-node/src/render-pipeline.ts';
import { driveFromSong } from '../../render-node/src/song-drive.ts';
import { voiceTrack } from '../../render-node/src/voice-driver.ts';
import { makeSong, SONG_RATE } from '../support/song-mix.ts';
import { printTable } from './stats.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, rounds: { type: 'string', default: '9' }, render: { type: 'boolean', default: false } } });
const seconds = Number(values.seconds);
const rounds = Math.max(2, Number(values.rounds));
const FPS = 25;
const RATE = 16_000;

/** A 44.1 kHz part of the song as the render decodes audio: mono 16 kHz (ffmpeg's resampler, as decodeAudio). */
async function at16k(pcm: Float32Array, keepAs?: string): Promise<DecodedAudio> {
  const dir = await mkdtemp(join(tmpdir(), 'petsing-drive-bench-'));
  try {
    await writeFile(join(dir, 'in.f32'), new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-f', 'f32le', '-ar', String(SONG_RATE), '-ac', '1', '-i', join(dir, 'in.f32'), '-ar', String(RATE), '-f', 'f32le', join(dir, 'out.f32')]);
    if (keepAs) await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-f', 'f32le', '-ar', String(RATE), '-ac', '1', '-i', join(dir, 'out.f32'), '-c:a', 'pcm_s16le', keepAs]);
    const bytes = await readFile(join(dir, 'out.f32'));
    const samples = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    return { samples, sampleRate: RATE, durationSeconds: samples.length / RATE, codec: 'pcm_f32le' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const song = makeSong({ seconds, verses: [[seconds * 0.13, seconds * 0.4], [seconds * 0.53, seconds * 0.87]] });
const mix = song.left.map((left, i) => (left + song.right[i]!) / 2);
const work = await mkdtemp(join(tmpdir(), 'petsing-drive-renders-'));
const paths = { audioPath: join(work, 'analysis.wav'), vocalsPath: join(work, 'vocals.wav'), accompanimentPath: join(work, 'accompaniment.wav') };
const [audio, vocals, accompaniment] = await Promise.all([at16k(mix, paths.audioPath), at16k(song.voice, paths.vocalsPath), at16k(song.band, paths.accompanimentPath)]);
const frames = Math.ceil(audio.durationSeconds * FPS);

const cases: Array<[string, () => unknown]> = [
  ['voice track of the mix (before stems)', () => voiceTrack(audio.samples, audio.sampleRate, FPS, frames)],
  ['driveFromSong, no stems (+ activity, sync report)', () => driveFromSong({ audio }, FPS, frames)],
  ['driveFromSong with stems (+ gating, beats, sync report)', () => driveFromSong({ audio, vocals, accompaniment }, FPS, frames)],
  ['beat tracker alone (accompaniment stem)', () => trackBand(accompaniment.samples, accompaniment.sampleRate)],
];
const times = cases.map(() => [] as number[]);
// The cases alternate within each round, so a change in the machine's load hits them alike.
for (let round = 0; round < rounds; round++) {
  cases.forEach(([, run], c) => {
    const started = performance.now();
    run();
    times[c]!.push(performance.now() - started);
  });
}
console.log(`the render's analysis of a ${seconds} s song (mono 16 kHz), ${rounds} rounds`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}\n`);
printTable(['analysis', 'first call ms', 'median of the rest ms'], cases.map(([name], c) => {
  const rest = times[c]!.slice(1).sort((a, b) => a - b);
  return [name, times[c]![0]!.toFixed(1), rest[Math.floor(rest.length / 2)]!.toFixed(1)];
}));

if (values.render) {
  const stages = { 'analysis copy alone': [] as StageTimings[], 'with the stems': [] as StageTimings[] };
  for (let round = 0; round < Math.min(rounds, 5); round++) {
    for (const [name, extra] of [['analysis copy alone', {}], ['with the stems', { vocalsPath: paths.vocalsPath, accompanimentPath: paths.accompanimentPath }]] as const) {
      const result = await renderVideo({ imagePath: join(import.meta.dirname, '..', '..', '..', 'shared', 'pets', 'dog-01.jpg'), audioPath: paths.audioPath, ...extra, outputPath: join(work, 'out.mp4'), thumbnailPath: join(work, 'out.jpg'), watermark: true, rigThreads: 0 });
      stages[name].push(result.stageTimings);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`\nwhole renders of the ${seconds} s song, dog-01.jpg, 720 px square, ${stages['with the stems'].length} alternating rounds (medians, ms)\n`);
  printTable(['render', 'decode', 'features', 'total'], Object.entries(stages).map(([name, runs]) => [name, ...(['decode', 'features', 'total'] as const).map((stage) => median(runs.map((run) => run[stage])).toFixed(0))]));
}
await rm(work, { recursive: true, force: true });
