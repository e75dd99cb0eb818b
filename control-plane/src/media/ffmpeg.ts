import { spawn } from 'node:child_process';

export class MediaToolError extends Error {
  constructor(message: string, readonly stderr: string) {
    super(message);
    this.name = 'MediaToolError';
  }
}

/** Runs ffmpeg or ffprobe to completion; rejects with the tail of stderr so failures explain themselves. */
export function runMediaTool(command: 'ffmpeg' | 'ffprobe', args: string[], signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', (error) => reject(new MediaToolError(`Could not run ${command}: ${error.message}`, stderr)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(stdout).toString('utf8'));
      else reject(new MediaToolError(`${command} exited with code ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`, stderr));
    });
  });
}

export type ProbedMedia = { durationSeconds: number; hasAudio: boolean; hasVideo: boolean; formatName: string };

export async function probeMedia(path: string): Promise<ProbedMedia> {
  const output = await runMediaTool('ffprobe', ['-v', 'error', '-show_entries', 'format=duration,format_name:stream=codec_type', '-of', 'json', path]);
  const parsed = JSON.parse(output) as { format?: { duration?: string; format_name?: string }; streams?: { codec_type?: string }[] };
  const streams = parsed.streams ?? [];
  return {
    durationSeconds: Number(parsed.format?.duration ?? Number.NaN),
    hasAudio: streams.some((stream) => stream.codec_type === 'audio'),
    hasVideo: streams.some((stream) => stream.codec_type === 'video'),
    formatName: parsed.format?.format_name ?? '',
  };
}
