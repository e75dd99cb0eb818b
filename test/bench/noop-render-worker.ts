import { runWorker } from '@petsing/platform/runtime';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { parsedActivities, renderActivitySchemas, TASK_QUEUES, type RenderActivities } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/platform/storage';
import { runMediaTool } from '../../control-plane/src/media/ffmpeg.ts';

export type MediaFixtures = { mp4: Buffer; jpeg: Buffer };

/** A one-second 64×64 MP4 and a JPEG still: real files, so a completed video downloads as one. */
export async function makeMediaFixtures(): Promise<MediaFixtures> {
  const directory = await mkdtemp(join(tmpdir(), 'petsing-bench-media-'));
  try {
    const mp4 = join(directory, 'video.mp4');
    const jpeg = join(directory, 'thumbnail.jpg');
    const source = ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=25:duration=1'];
    await runMediaTool('ffmpeg', [...source, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', mp4]);
    await runMediaTool('ffmpeg', [...source, '-frames:v', '1', jpeg]);
    return { mp4: await readFile(mp4), jpeg: await readFile(jpeg) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Serves the GPU queue with a render that only stores the pre-made outputs, so whatever the benchmark
 * measures is orchestration: Temporal, the control activities, the database and audio preparation.
 */
export async function startNoopRenderWorker(options: {
  address: string;
  namespace: string;
  objects: ObjectStore;
  fixtures: MediaFixtures;
  workerOptions?: Partial<WorkerOptions>;
}): Promise<{ stop(): Promise<void> }> {
  const { objects, fixtures } = options;
  const activities: RenderActivities = {
    renderLipSync: async ({ outputKey, thumbnailKey }) => {
      await Promise.all([
        objects.put(outputKey, fixtures.mp4, { contentType: 'video/mp4' }),
        objects.put(thumbnailKey, fixtures.jpeg, { contentType: 'image/jpeg' }),
      ]);
      return { outputKey, thumbnailKey, durationSeconds: 1, frames: 25 };
    },
    // The benchmark creates from image URLs only, which the render step checks; no photo is checked ahead.
    detectFace: async () => ({ width: 1, height: 1, face: null }),
  };
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: TASK_QUEUES.render,
    // As a render node serves them: each input parsed with its contract schema first.
    activities: parsedActivities(renderActivitySchemas, activities),
    ...options.workerOptions,
  });
  return runWorker(worker, connection);
}
