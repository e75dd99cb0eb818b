/**
 * npm run bench:rig -- [square|4:5|9:16]
 *
 * The face rig's own CPU time, which the machine's load does not move the way it moves bench:render's wall-clock
 * ratios: the sample pet (its hints, the watermark on) framed at 720 px wide, driven by the synthetic 20 s song
 * through the render's own voice track, idle life and performance (head-performance.ts: narrowed eyes, lifted brows,
 * the lean into phrases, trailing ears, breaths), `FaceRig.render` over every pose on this thread, twice: first
 * with an empty jaw cache, then all cached. Prints CPU (process.cpuUsage) and wall milliseconds a frame.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VideoAspect } from '@petsing/workflows';
import { SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { FaceRig } from '../src/face-rig.ts';
import { performedPoses } from '../src/head-performance.ts';
import { idlePoses } from '../src/idle-life.ts';
import { faceLength } from '../src/pet-face.ts';
import { prepareJob } from '../src/render-pipeline.ts';
import { renderSamplePet } from '../src/sample-pet.ts';
import { driveFromSong } from '../src/song-drive.ts';
import { BLINK_EVERY } from '../src/species-rig.ts';
import { createWatermark } from '../src/watermark.ts';

const FPS = 25;
const SECONDS = 20;
const aspect = VideoAspect.parse(process.argv[2] ?? 'square');
const dir = await mkdtemp(join(tmpdir(), 'petsing-rig-bench-'));
try {
  await writeFile(join(dir, 'pet.png'), await renderSamplePet(2048));
  await writeSyntheticSong(join(dir, 'song.mp3'), SECONDS);
  const job = await prepareJob({ imagePath: join(dir, 'pet.png'), audioPath: join(dir, 'song.mp3'), width: 720, aspect, faceHints: SAMPLE_PET_FACE });
  const frames = SECONDS * FPS;
  const { voice, pitch } = driveFromSong(job, FPS, frames);
  const life = idlePoses(voice, faceLength(job.frameFace), true, BLINK_EVERY.muzzle);
  const performed = performedPoses({ voice, life, pitch, faceLengthPixels: faceLength(job.frameFace), lids: true, enabled: true });
  const { width, height } = job.frame;
  const rig = new FaceRig({ frame: job.frame, face: job.frameFace, blinks: true, overlay: await createWatermark(width, height) });
  const out = Buffer.alloc(width * height * 3);
  for (const pass of ['empty jaw cache', 'all cached']) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let f = 0; f < frames; f++) rig.render({ open: voice.open[f]!, round: voice.round[f]!, ...performed[f]! }, out);
    const used = process.cpuUsage(cpu);
    console.log(`${width}x${height} (${aspect}), ${pass}: cpu ${((used.user + used.system) / 1000 / frames).toFixed(2)} ms a frame, wall ${((performance.now() - started) / frames).toFixed(2)} ms a frame`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
