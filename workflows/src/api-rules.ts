/**
 * Rules of the API that its clients must know as well: the control plane enforces them, the web app
 * (dashboard/) explains and pre-checks them and the MCP tools describe them. Defined here once, so what a
 * person is told cannot drift from what the service does.
 *
 * Browser-safe and dependency-free on purpose: the web app's bundle imports this file
 * (`@petsing/workflows/api-rules`), so it imports nothing, no Node module and no zod.
 */

const MB = 1024 * 1024;

/**
 * Statuses a video does not leave on its own: its render delivered, or it never will. Waits end on them
 * (`Prefer: wait`, the event stream, the MCP tool wait_for_video, the web app). An unknown status is not
 * terminal, as the API document tells clients.
 */
export const TERMINAL_VIDEO_STATUSES = ['completed', 'failed'] as const;
export type TerminalVideoStatus = (typeof TERMINAL_VIDEO_STATUSES)[number];
export const isTerminalVideoStatus = (status: string): status is TerminalVideoStatus => (TERMINAL_VIDEO_STATUSES as readonly string[]).includes(status);

/** What one uploaded file may be. */
export type UploadLimits = {
  /**
   * Every accepted format by its content (the service reads the file's first bytes; the declared content type
   * and the file name decide nothing), with the file extension it is stored under.
   */
  formats: Readonly<Record<string, string>>;
  /** Other content types browsers and clients declare for the same formats (a file picker offers them too). */
  alsoDeclaredAs: readonly string[];
  /** The formats in words, as messages name them ("… is not {formatNames}"). */
  formatNames: string;
  maxBytes: number;
};

/** A pet photo sent as a file (POST /v1/images, the web app). HEIC, accepted from image URLs, is not: browsers cannot show it. */
export const PHOTO_UPLOAD = {
  formats: { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' },
  alsoDeclaredAs: [],
  formatNames: 'a PNG, JPEG or WebP image',
  maxBytes: 15 * MB,
} as const satisfies UploadLimits;

/** An audio file for a video (POST /v1/audio, the web app's create with audio); its length is MIN/MAX_AUDIO_SECONDS. */
export const AUDIO_UPLOAD = {
  formats: { 'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/mp4': 'm4a', 'video/mp4': 'mp4', 'audio/aac': 'aac', 'video/webm': 'webm' },
  alsoDeclaredAs: ['audio/webm', 'audio/mp3', 'audio/x-wav', 'audio/x-m4a'],
  formatNames: 'MP3, WAV, MP4/AAC or WebM audio',
  maxBytes: 20 * MB,
} as const satisfies UploadLimits;

/** The shortest audio a video is made from (an upload, a recording, speech, a short video's sound); shorter is refused. */
export const MIN_AUDIO_SECONDS = 2;
/** The longest video: a longer upload is refused, a recording stops there, a longer short video's sound is cut to a window of it. */
export const MAX_AUDIO_SECONDS = 30;
/**
 * The longest soundtrack kept (a short video's sound): a video lasts at most MAX_AUDIO_SECONDS, the window of the
 * soundtrack with the most singing unless the caller gives its start (README, "The best 30 seconds").
 */
export const MAX_SOURCE_AUDIO_SECONDS = 180;
/** The longest text spoken for a video (about MAX_AUDIO_SECONDS of speech). */
export const MAX_SPEECH_CHARACTERS = 500;

/** Every content type an upload may be declared as: a file picker's `accept` list, the API document's multipart encoding. */
export const acceptedContentTypes = (upload: UploadLimits): string[] => [...Object.keys(upload.formats), ...upload.alsoDeclaredAs];

/** A size as messages give it: "15 MB". */
export const megabytes = (bytes: number) => `${Number((bytes / MB).toFixed(1))} MB`;
