import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Made and checked the way an owner's ear and a streaming service's meter would: sources made with ffmpeg's
 * generators, outputs measured with ffprobe and ffmpeg's ebur128 (EBU R128 / ITU-R BS.1770 true peak), independently
 * of the code under test.
 */

const run = promisify(execFile);

/** What `ebur128=peak=true` says of a file: integrated loudness (LUFS) and true peak (dBTP; -Infinity for silence). */
export async function loudnessOf(path: string): Promise<{ integratedLufs: number; truePeakDbtp: number }> {
  const { stderr } = await run('ffmpeg', ['-nostdin', '-hide_banner', '-nostats', '-i', path, '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-']);
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  const integrated = /\bI:\s+(-?[\d.]+) LUFS/.exec(summary);
  const peak = /\bPeak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary);
  if (!integrated || !peak) throw new Error(`no ebur128 summary for ${path}: ${stderr.slice(-500)}`);
  return { integratedLufs: Number(integrated[1]), truePeakDbtp: peak[1] === '-inf' ? -Infinity : Number(peak[1]) };
}

export interface AudioStream {
  codec: string;
  sampleRate: number;
  channels: number;
  /** Bits per second, as ffprobe reports the stream's. */
  bitRate: number;
  seconds: number;
}

/** ffprobe's view of a file's audio streams. */
export async function audioStreamsOf(path: string): Promise<AudioStream[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'a', '-show_entries', 'stream=codec_name,sample_rate,channels,bit_rate,duration', '-of', 'json', path]);
  const { streams } = JSON.parse(stdout) as { streams: { codec_name: string; sample_rate: string; channels: number; bit_rate?: string; duration: string }[] };
  return streams.map((stream) => ({
    codec: stream.codec_name,
    sampleRate: Number(stream.sample_rate),
    channels: stream.channels,
    bitRate: Number(stream.bit_rate ?? Number.NaN),
    seconds: Number(stream.duration),
  }));
}

/** ffprobe's durations of a file: the container's and each stream's, in seconds. */
export async function durationsOf(path: string): Promise<{ container: number; video: number; audio: number }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,duration', '-of', 'json', path]);
  const { format, streams } = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string; duration: string }[] };
  const of = (type: string) => Number(streams.find((stream) => stream.codec_type === type)?.duration ?? Number.NaN);
  return { container: Number(format.duration), video: of('video'), audio: of('audio') };
}

/** Each channel's RMS level in dB, over the whole file or (`band`) within a frequency band in Hz. */
export async function channelLevels(path: string, band?: [number, number]): Promise<number[]> {
  const filter = band ? `highpass=f=${band[0]}:poles=2,highpass=f=${band[0]}:poles=2,lowpass=f=${band[1]}:poles=2,lowpass=f=${band[1]}:poles=2,` : '';
  const { stderr } = await run('ffmpeg', ['-nostdin', '-hide_banner', '-nostats', '-i', path, '-map', '0:a:0', '-af', `${filter}astats=measure_perchannel=RMS_level:measure_overall=none`, '-f', 'null', '-']);
  return [...stderr.matchAll(/RMS level dB: (-?[\d.]+|-inf)/g)].map((match) => (match[1] === '-inf' ? -Infinity : Number(match[1])));
}

/**
 * How wide a file's stereo image is: the level of its side signal (L − R) under its middle (L + R), in dB; −Infinity
 * for the same signal on both channels (a mono file counts as that).
 */
export async function stereoWidthDb(path: string): Promise<number> {
  const { stdout } = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '2', '-f', 'f32le', '-acodec', 'pcm_f32le', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 28 });
  let side = 0;
  let middle = 0;
  for (let offset = 0; offset + 8 <= stdout.length; offset += 8) {
    const left = stdout.readFloatLE(offset);
    const right = stdout.readFloatLE(offset + 4);
    side += (left - right) ** 2;
    middle += (left + right) ** 2;
  }
  return 10 * Math.log10(side / middle);
}

/** Mono 48 kHz float samples of a file's first audio stream (its channels averaged). */
async function monoSamples(path: string): Promise<Float32Array> {
  const { stdout } = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '1', '-ar', '48000', '-f', 'f32le', '-acodec', 'pcm_f32le', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 28 });
  const samples = new Float32Array(stdout.length / 4);
  for (let i = 0; i < samples.length; i++) samples[i] = stdout.readFloatLE(i * 4);
  return samples;
}

/** How late `other` plays `reference`'s sound, in ms (the lag of their strongest correlation within ±50 ms, over 1-2 s). */
export async function delayMs(reference: string, other: string): Promise<number> {
  const [a, b] = await Promise.all([monoSamples(reference), monoSamples(other)]);
  const maxLag = 2400;
  let best = -Infinity;
  let bestLag = 0;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let sum = 0;
    for (let i = 48_000; i < 2 * 48_000; i += 4) sum += a[i]! * (b[i + lag] ?? 0);
    if (sum > best) [best, bestLag] = [sum, lag];
  }
  return bestLag / 48;
}

/**
 * A stereo song-like source (44.1 kHz 16-bit WAV): a tone moving in loudness on each side (440 Hz left, 660 Hz right),
 * a drum hit in the middle twice a second, pink noise on the left and brighter white noise on the right (content up to
 * 20 kHz), at `lufs` integrated. Pushed hot, it clips at 0 dBFS as it is stored.
 */
export async function writeStereoSource(path: string, seconds: number, lufs: number): Promise<void> {
  const tones = `aevalsrc='0.30*sin(2*PI*440*t)*(0.6+0.4*sin(2*PI*1.5*t))+0.8*exp(-25*mod(t,0.5))*sin(2*PI*70*t)|0.22*sin(2*PI*660*t)*(0.6+0.4*cos(2*PI*1.1*t))+0.8*exp(-25*mod(t,0.5))*sin(2*PI*70*t)':s=44100:d=${seconds}`;
  const noises = [`anoisesrc=c=pink:a=0.12:r=44100:d=${seconds}:seed=7`, `anoisesrc=c=white:a=0.05:r=44100:d=${seconds}:seed=11`];
  const graph = '[1][2]amerge=inputs=2[noise];[0][noise]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo';
  const raw = `${path}.raw.wav`;
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', tones, ...noises.flatMap((noise) => ['-f', 'lavfi', '-i', noise]), '-filter_complex', graph, '-c:a', 'pcm_f32le', raw]);
  await writeAtLoudness(raw, path, lufs);
}

/** A mono source (44.1 kHz 16-bit WAV): a warbling 330 Hz tone over pink noise, at `lufs` integrated. */
export async function writeMonoSource(path: string, seconds: number, lufs: number): Promise<void> {
  const raw = `${path}.raw.wav`;
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `aevalsrc='0.3*sin(2*PI*330*t)*(0.6+0.4*sin(2*PI*2*t))':s=44100:d=${seconds}`,
    '-f', 'lavfi', '-i', `anoisesrc=c=pink:a=0.05:r=44100:d=${seconds}:seed=3`, '-filter_complex', '[0][1]amix=inputs=2:normalize=0', '-c:a', 'pcm_f32le', raw]);
  await writeAtLoudness(raw, path, lufs);
}

/**
 * Stereo white noise switched on and off hard (20 ms bursts four times a second over a bed 26 dB lower), at `lufs`:
 * the sound a lossy coder overshoots most (AAC lifts its true peak by about 5 dB).
 */
export async function writeNoiseBursts(path: string, seconds: number, lufs: number): Promise<void> {
  const raw = `${path}.raw.wav`;
  const noise = (seed: number) => ['-f', 'lavfi', '-i', `anoisesrc=c=white:a=0.3:r=44100:d=${seconds}:seed=${seed}`];
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...noise(5), ...noise(9), '-filter_complex',
    "[0][1]amerge=inputs=2,aformat=sample_fmts=flt:channel_layouts=stereo,volume='if(lt(mod(t,0.25),0.02),1,0.05)':eval=frame", '-c:a', 'pcm_f32le', raw]);
  await writeAtLoudness(raw, path, lufs);
}

/** Copies `raw` to `path` as 16-bit WAV, with the gain that puts it at `lufs` (what does not fit in 16 bits clips). */
async function writeAtLoudness(raw: string, path: string, lufs: number): Promise<void> {
  const { integratedLufs } = await loudnessOf(raw);
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', raw, '-af', `volume=${(lufs - integratedLufs).toFixed(2)}dB`, '-c:a', 'pcm_s16le', path]);
}
