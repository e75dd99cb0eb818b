import { runProcess, type ProcessResult } from '@petsing/platform/tools';

export class MediaToolError extends Error {
  constructor(message: string, readonly stderr: string) {
    super(message);
    this.name = 'MediaToolError';
  }
}

/** Runs ffmpeg or ffprobe to completion and answers its stdout; rejects with the tail of stderr so failures explain themselves. */
export async function runMediaTool(command: 'ffmpeg' | 'ffprobe', args: string[], signal?: AbortSignal): Promise<string> {
  return (await runToCompletion(command, args, signal)).stdout.toString('utf8');
}

/** Runs ffmpeg to completion and answers the tail of what it logged (filters such as ebur128 report there). */
export async function runFfmpegForLog(args: string[], signal?: AbortSignal): Promise<string> {
  return (await runToCompletion('ffmpeg', args, signal)).stderr;
}

async function runToCompletion(command: 'ffmpeg' | 'ffprobe', args: string[], signal?: AbortSignal): Promise<ProcessResult> {
  let result: ProcessResult;
  try {
    result = await runProcess(command, args, signal ? { signal } : {});
  } catch (error) {
    throw new MediaToolError(`Could not run ${command}: ${(error as Error).message}`, '');
  }
  if (result.code === 0) return result;
  throw new MediaToolError(
    `${command} exited with code ${result.code}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}`,
    result.stderr,
  );
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
