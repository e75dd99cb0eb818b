import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Overlay } from './compositor.ts';
import type { RigPose } from './face-rig.ts';
import type { RgbImage } from './image-decoder.ts';
import type { PetFace } from './pet-face.ts';
import type { RigThreadReply, RigThreadRequest } from './rig-thread.ts';

const ENTRY = new URL('./rig-thread-entry.mjs', import.meta.url);

/**
 * Threads for the face rig: none on a machine of two cores or fewer (measured there, a rig thread
 * only adds its start-up and hand-offs to a CPU x264 already fills: 25% slower, docs/benchmarks.md);
 * otherwise all cores but two left to x264 and the render loop, at most four.
 */
export function defaultRigThreads(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 2));
}

/**
 * The face rig on worker threads: each thread builds its own rig from the still frame and draws the
 * frames given to it (round robin) into shared buffers, so drawing runs ahead on other cores while
 * the render loop feeds ffmpeg.
 */
export class RigPool {
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private failure: Error | undefined;

  private constructor(private readonly workers: Worker[]) {
    for (const worker of workers) {
      worker.on('message', (reply: RigThreadReply) => {
        const waiting = this.pending.get(reply.index);
        this.pending.delete(reply.index);
        if (reply.type === 'rendered') waiting?.resolve();
        else waiting?.reject(new Error(`the face rig failed on frame ${reply.index}: ${reply.message}`));
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`a face-rig thread exited with code ${code}`));
      });
    }
  }

  static start(options: { threads: number; frame: RgbImage; face: PetFace; overlay?: Overlay; blinks: boolean }): RigPool {
    const workers = Array.from({ length: options.threads }, () => new Worker(ENTRY));
    for (const worker of workers) {
      const request: RigThreadRequest = {
        type: 'start',
        width: options.frame.width,
        height: options.frame.height,
        pixels: options.frame.data,
        face: options.face,
        blinks: options.blinks,
        ...(options.overlay ? { overlay: options.overlay } : {}),
      };
      worker.postMessage(request);
    }
    return new RigPool(workers);
  }

  /** Draws frame `index` into `target`, whose memory must be a SharedArrayBuffer (see sharedFrameBuffer). */
  render(index: number, pose: RigPose, target: Buffer): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!(target.buffer instanceof SharedArrayBuffer) || target.byteOffset !== 0) throw new Error('rig threads draw into whole shared buffers');
    return new Promise((resolve, reject) => {
      this.pending.set(index, { resolve, reject });
      const request: RigThreadRequest = { type: 'render', index, pose, target: target.buffer as SharedArrayBuffer };
      this.workers[index % this.workers.length]!.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('the face-rig threads were stopped'));
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }
}

/** A frame buffer the render loop and the rig threads share. */
export function sharedFrameBuffer(bytes: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes));
}
