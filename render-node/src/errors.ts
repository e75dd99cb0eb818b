export type RenderErrorCode =
  | 'image_undecodable'
  | 'image_too_large'
  | 'audio_undecodable'
  | 'audio_no_stream'
  | 'audio_empty'
  | 'face_not_found'
  | 'model_contract'
  | 'mouth_track_invalid'
  | 'model_load'
  | 'provider_unavailable'
  | 'encoder_failed'
  | 'aborted';

/** Codes a retry cannot fix: the input or the deployed model is wrong, not the machine. */
const PERMANENT_CODES: ReadonlySet<RenderErrorCode> = new Set([
  'image_undecodable',
  'image_too_large',
  'audio_undecodable',
  'audio_no_stream',
  'audio_empty',
  'face_not_found',
  'model_contract',
  'mouth_track_invalid',
]);

export class RenderError extends Error {
  readonly code: RenderErrorCode;
  readonly permanent: boolean;
  /** A sentence meant for the person who uploaded the files (or the operator, for model codes). */
  readonly hint: string;
  /**
   * What a decoder or tool said (libvips, heif-convert, ffmpeg), temporary paths and all: for the log and the CLI,
   * never for the message, which the person who sent the file reads.
   */
  readonly detail: string | undefined;

  constructor(code: RenderErrorCode, message: string, hint: string, options?: { cause?: unknown; permanent?: boolean; detail?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RenderError';
    this.code = code;
    this.hint = hint;
    this.permanent = options?.permanent ?? PERMANENT_CODES.has(code);
    this.detail = options?.detail;
  }
}

export function isRenderError(error: unknown): error is RenderError {
  return error instanceof RenderError;
}
