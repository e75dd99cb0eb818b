// Helpers for running external tools (ffmpeg, ffprobe, yt-dlp, espeak-ng, heif-convert) that the control
// plane and render nodes both use. Node built-ins only: importing them loads no Temporal or image code.
export * from './process-runner.ts';
export * from './scratch-directory.ts';
export * from './checkout-cache.ts';
