import { parentPort } from 'node:worker_threads';
import type { Overlay } from './compositor.ts';
import { FaceRig, type RigPose } from './face-rig.ts';
import type { PetFace } from './pet-face.ts';

/** What a rig thread is told: once how to build its rig, then which frames to draw into which shared buffers. */
export type RigThreadRequest =
  | { type: 'start'; width: number; height: number; pixels: Uint8Array; face: PetFace; overlay?: Omit<Overlay, 'rgba'> & { rgba: Uint8Array }; blinks: boolean }
  | { type: 'render'; index: number; pose: RigPose; target: SharedArrayBuffer };

export type RigThreadReply = { type: 'rendered'; index: number } | { type: 'failed'; index: number; message: string };

const port = parentPort;
if (!port) throw new Error('rig-thread.ts runs as a worker thread (see rig-pool.ts)');

let rig: FaceRig | undefined;
port.on('message', (request: RigThreadRequest) => {
  if (request.type === 'start') {
    rig = new FaceRig({
      frame: { width: request.width, height: request.height, data: Buffer.from(request.pixels.buffer, request.pixels.byteOffset, request.pixels.byteLength) },
      face: request.face,
      blinks: request.blinks,
      // Buffers arrive as plain Uint8Arrays: wrap them again, without copying.
      ...(request.overlay ? { overlay: { ...request.overlay, rgba: Buffer.from(request.overlay.rgba.buffer, request.overlay.rgba.byteOffset, request.overlay.rgba.byteLength) } } : {}),
    });
    return;
  }
  try {
    if (!rig) throw new Error('render before start');
    rig.render(request.pose, Buffer.from(request.target));
    port.postMessage({ type: 'rendered', index: request.index } satisfies RigThreadReply);
  } catch (error) {
    port.postMessage({ type: 'failed', index: request.index, message: (error as Error).stack ?? String(error) } satisfies RigThreadReply);
  }
});
