import { spawn, type ChildProcess } from 'node:child_process';
import { DELIVERY_AUDIO_ENCODING } from '@petsing/workflows/media';
import { RenderError } from './errors.ts';

export interface EncoderOptions {
  width: number;
  height: number;
  fps: number;
  /** The audio the render listened to: encoded as the soundtrack (AAC 192 kb/s, 48 kHz) when there is no `soundtrackPath`. */
  audioPath: string;
  /** The prepared soundtrack (AAC in M4A, at its loudness already): copied into the MP4 as it is. */
  soundtrackPath?: string;
  outputPath: string;
  /** x264 preset; veryfast keeps a 2-core node faster than real time at 512². */
  preset?: string;
  crf?: number;
}

export function encoderArgs(options: EncoderOptions, videoInput: string = 'pipe:0'): string[] {
  return [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-video_size',
    `${options.width}x${options.height}`,
    '-framerate',
    String(options.fps),
    '-i',
    videoInput,
    '-i',
    options.soundtrackPath ?? options.audioPath,
    '-map',
    '0:v:0',
    '-map',
    '1:a:0',
    '-c:v',
    'libx264',
    '-preset',
    options.preset ?? 'veryfast',
    '-crf',
    String(options.crf ?? 20),
    // Fur is fine grain: x264's default tuning smooths it in every frame where the head moves (the
    // tree of references favours still areas); measured on the real pets, 'grain' keeps moving fur at
    // ≥ 90% of the photo's sharpness for about 1.4× the bytes.
    '-tune',
    'grain',
    '-pix_fmt',
    'yuv420p',
    // One lossy encode of the sound in all: the prepared soundtrack is AAC already.
    ...(options.soundtrackPath ? ['-c:a', 'copy'] : DELIVERY_AUDIO_ENCODING),
    '-movflags',
    '+faststart',
    options.outputPath,
  ];
}

/**
 * ffmpeg fed raw RGB frames through stdin. With a fixed pool of frame buffers the renderer holds
 * at most a few frames plus one inference batch, so memory stays flat for any clip length.
 */
export class FfmpegEncoder {
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private stderr = '';
  private failure: Error | undefined;

  constructor(options: EncoderOptions) {
    this.child = spawn('ffmpeg', encoderArgs(options), { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
    });
    // EPIPE when ffmpeg dies early; the exit code carries the real reason.
    this.child.stdin!.on('error', (error) => {
      this.failure ??= error;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('error', (error) => {
        this.failure ??= error;
        resolve(null);
      });
      this.child.on('close', (code) => resolve(code));
    });
  }

  /**
   * Queues a frame; the promise settles once the bytes have left for ffmpeg, so the caller knows
   * when the buffer may be reused. Callers bound how many frames are in flight.
   */
  write(frame: Buffer): Promise<void> {
    if (this.failure || this.child.exitCode !== null) return Promise.reject(this.encoderError());
    return new Promise((resolve, reject) => {
      this.child.stdin!.write(frame, (error) => {
        if (error) {
          this.failure ??= error;
          reject(this.encoderError());
        } else resolve();
      });
    });
  }

  async finish(): Promise<void> {
    this.child.stdin!.end();
    const code = await this.exited;
    if (code !== 0) throw this.encoderError(code);
  }

  /** Stops ffmpeg at once (abort); the caller removes the partial output. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private encoderError(code?: number | null): RenderError {
    const detail = this.stderr.trim().split('\n').slice(-3).join(' | ') || this.failure?.message || `exit code ${code}`;
    return new RenderError('encoder_failed', `ffmpeg failed: ${detail}`, 'A render-node problem, not the upload; retry on another node.', {
      cause: this.failure,
      permanent: false,
    });
  }
}
