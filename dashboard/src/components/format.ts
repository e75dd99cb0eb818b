import type { Aspect, WebVideo } from '../api/client.ts';

export const ASPECTS: { value: Aspect; label: string; detail: string }[] = [
  { value: 'square', label: 'Square', detail: '1:1, for feeds' },
  { value: '4:5', label: 'Portrait', detail: '4:5, for posts' },
  { value: '9:16', label: 'Story', detail: '9:16, full screen' },
];

export const aspectLabel = (aspect: string) => ASPECTS.find((entry) => entry.value === aspect)?.label ?? aspect;

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'long' });
export const formatDateTime = (iso: string) => dateTime.format(new Date(iso));
export const formatDate = (iso: string) => dateOnly.format(new Date(iso));

export function statusText(video: Pick<WebVideo, 'status' | 'progress' | 'stage'>): string {
  switch (video.status) {
    case 'pending':
      return 'Waiting for a free renderer';
    case 'processing':
      if (video.stage === 'preparing') return 'Getting the photo and sound ready';
      if (video.stage === 'queued') return 'In line for a free renderer';
      return `Rendering, ${video.progress}% done`;
    case 'completed':
      return 'Ready';
    case 'failed':
      return 'Failed';
    default:
      return 'Working on it';
  }
}

/** Why a render failed, in plain words (the codes the render pipeline records); the service's text otherwise. */
const FAILURE_REASONS: Record<string, string> = {
  render_failed: 'Something went wrong while rendering. The credit it used was given back; please try again.',
  render_lost: 'The render was interrupted and could not finish. The credit it used was given back.',
  queue_unavailable: 'The service was too busy to start the render. The credit it used was given back; please try again.',
  image_undecodable: 'The photo could not be read. Try another JPEG, PNG or WebP photo.',
  face_not_found: 'No pet face was found in the photo. Try a photo where the face is clear and facing the camera.',
  audio_undecodable: 'The sound could not be read. Try another recording or song.',
  audio_empty: 'The sound was silent or empty. Try another recording or song.',
  audio_no_stream: 'The file had no sound in it. Try another recording or song.',
  mouth_track_invalid: 'This song could not be used. Please pick another song.',
};

export function failureReason(error: WebVideo['error']): string {
  if (!error) return 'The render failed. The credit it used was given back.';
  return FAILURE_REASONS[error.code] ?? error.message;
}

export const PLAN_NAMES: Record<string, string> = { weekly: 'Weekly', annual: 'Annual' };
export const INTERVAL_WORDS: Record<string, string> = { week: 'per week', year: 'per year', month: 'per month' };

/** The pet as the photo check named it, in words ("guinea pig"); "pet" when it did not say. */
export const petName = (species: string | undefined) => (species ? species.replace('_', ' ') : 'pet');
