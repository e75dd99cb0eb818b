/**
 * `npm run bench:audio [-- --rounds N]`: what audio preparation costs for a 30 s clip (the longest a video takes), and
 * how much of it is measuring. Two stereo sources made by test/support/soundtrack.ts (quiet: −30 LUFS with drum hits;
 * hot: clipping at 0 dBFS), each prepared, in alternation within every round, the way main did before issue 35 (one
 * ffmpeg pass: single-pass loudnorm to the mono 16 kHz analysis copy) and the way it does now (a measuring pass, one
 * pass writing the analysis copy and the soundtrack, a pass measuring the written soundtrack; more only when it
 * missed). Wall time, and CPU time of the ffmpeg processes (less sensitive to a busy machine). docs/benchmarks.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { writeAudioCopies } from '../../control-plane/src/media/loudness.ts';
import { writeStereoSource } from '../support/soundtrack.ts';
import { ms, percentile, printTable, sampleCpu } from './stats.ts';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(options.rounds);
const SECONDS = 30;
const run = promisify(execFile);

const dir = await mkdtemp(join(tmpdir(), 'petsing-audio-bench-'));
try {
  const sources = { quiet: join(dir, 'quiet.wav'), hot: join(dir, 'hot.wav') };
  await Promise.all([writeStereoSource(sources.quiet, SECONDS, -30), writeStereoSource(sources.hot, SECONDS, -6)]);
  const out = (name: string) => join(dir, name);

  type Stages = { measure: number; write: number; check: number; writes: number };
  const variants: Record<string, (source: string) => Promise<Stages | undefined>> = {
    'before: loudnorm, analysis copy only': async (source) => {
      await run('ffmpeg', ['-v', 'error', '-y', '-i', source, '-vn', '-t', String(SECONDS), '-af', 'loudnorm=I=-16:TP=-1.5:LRA=11', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', out('before.wav')]);
      return undefined;
    },
    'now: analysis copy only': async (source) => stagesOf(await writeAudioCopies(source, { analysis: out('analysis.wav') })),
    'now: analysis copy and soundtrack': async (source) => stagesOf(await writeAudioCopies(source, { analysis: out('analysis.wav'), delivery: out('delivery.m4a') })),
  };
  const stagesOf = (report: Awaited<ReturnType<typeof writeAudioCopies>>): Stages => ({ measure: report.measureMs, write: report.writeMs, check: report.checkMs, writes: report.deliveryWrites });

  const results = new Map<string, { wall: number[]; cpu: number[]; stages: Stages[] }>();
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [kind, source] of Object.entries(sources)) {
      for (const [variant, prepare] of Object.entries(variants)) {
        const key = `${variant}\t${kind}`;
        const result = results.get(key) ?? { wall: [], cpu: [], stages: [] };
        const cpuBefore = sampleCpu(undefined).children;
        const started = performance.now();
        const stages = await prepare(source);
        result.wall.push(performance.now() - started);
        result.cpu.push((sampleCpu(undefined).children - cpuBefore) * 1000);
        if (stages) result.stages.push(stages);
        results.set(key, result);
      }
    }
    loads.push(loadavg()[0]!);
  }

  console.log(`audio preparation of a ${SECONDS} s stereo clip, ${ROUNDS} rounds; medians in ms`);
  console.log(`machine: ${availableParallelism()} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}, load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
  const median = (values: number[]) => ms(percentile(values, 50));
  printTable(
    ['preparation', 'source', 'wall', 'ffmpeg CPU', 'measuring the source', 'writing', 'measuring the soundtrack', 'soundtrack writes'],
    [...results].map(([key, { wall, cpu, stages }]) => [
      ...key.split('\t'),
      median(wall),
      median(cpu),
      ...(stages.length > 0 ? [median(stages.map((s) => s.measure)), median(stages.map((s) => s.write)), median(stages.map((s) => s.check)), Math.max(...stages.map((s) => s.writes))] : ['–', '–', '–', '–']),
    ]),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
