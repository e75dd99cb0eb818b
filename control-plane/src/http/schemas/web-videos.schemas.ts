import { z } from 'zod';
import { AspectRequestField } from './video-aspect.schemas.ts';

/** Request and response bodies of the web app's create and delete calls (field names are ours; see docs/web-app.md). */

const file = (description: string) => z.string().meta({ format: 'binary', description });

const image = file(
  'The pet photo: PNG, JPEG or WebP (not HEIC), at most 15 MB. The format is read from the bytes; the declared type and name do not matter. '
    + 'Without a `face` field the photo is checked first: one without a pet face is refused (400 face_not_found) before anything is spent.',
).optional();

/** Every create's fields besides `image` and its sound: the photo by id, the face hints and the output shape. */
const photoFields = {
  image_id: z.uuid().optional().meta({ description: 'Instead of `image`: the id answered by POST /images (valid 24 hours).' }),
  face: z.string().optional().meta({
    description:
      'Optional corrections of the pet\'s face: the JSON text of a FaceHints object (the same as `face` of POST /v1/videos), '
      + 'e.g. {"mouth":{"x":0.52,"y":0.71}} — fractions 0-1 of the photo\'s width and height after EXIF orientation. Required (with '
      + 'a mouth) for a photo whose check found no face.',
    example: '{"mouth":{"x":0.52,"y":0.71}}',
  }),
  aspect: AspectRequestField,
};

export const CreateWithTemplateForm = z
  .object({
    image,
    ...photoFields,
    template_id: z.string().min(1).meta({ description: 'A template id from GET /templates, sent back exactly as given (numeric string).', example: '1' }),
  })
  .meta({ id: 'CreateWithTemplateForm', description: 'Send exactly one of `image` and `image_id`.' });

export const CreateWithAudioForm = z
  .object({
    image,
    ...photoFields,
    audio: file('The audio: MP3, WAV, MP4/M4A (AAC) or WebM, at most 20 MB, lasting 2 to 30 seconds (measured by decoding). Other formats than MP3 are transcoded to MP3.').optional(),
    audio_url: z.url().optional().meta({ description: 'Instead of `audio`: the `url` answered by POST /tts or POST /social/extract-audio for the caller.' }),
    audio_start_seconds: z.string().optional().meta({
      description:
        'Where in the audio the video begins, in seconds (a number, from 0 to the audio\'s length minus 2: 400 audio_start_out_of_range otherwise). '
        + 'Without it, a sound longer than 30 s is cut at its 30 s with the most singing, from a sung phrase.',
      example: '12.5',
    }),
  })
  .meta({ id: 'CreateWithAudioForm', description: 'Send exactly one of `image` and `image_id`, and exactly one of `audio` and `audio_url`.' });

export const DeleteVideoRequest = z
  .object({ video_id: z.uuid().meta({ description: 'The video to delete, as in GET /user/videos.' }) })
  .meta({ id: 'DeleteVideoRequest' });

export const DeleteVideoResult = z
  .object({ message: z.string().meta({ example: 'Video 4f1c2d9e-0b7a-4d53-9a43-2f0e8c1b6a55 deleted.' }) })
  .meta({ id: 'DeleteVideoResult' });

export const CheckAudioForm = z
  .object({
    audio: file('The audio to check: the same file, formats and limits as `audio` of POST /create-with-audio.').optional(),
    audio_url: z.url().optional().meta({ description: 'Instead of `audio`: the `url` answered by POST /tts or POST /social/extract-audio for the caller.' }),
  })
  .meta({ id: 'CheckAudioForm', description: 'Send exactly one of `audio` and `audio_url`.' });

/** What the web app shows before paying when the audio holds no singing voice. */
export const NO_VOICE_WARNING = 'No singing voice found: the pet will keep its mouth at rest and only nod to the music. Pick a song with vocals, or go ahead.';

export const AudioCheck = z
  .object({
    vocals_found: z.boolean().meta({ description: 'Whether the audio holds a singing (or speaking) voice, as the render will find it.' }),
    voiced_seconds: z.number().min(0).meta({ description: 'Seconds of that part in which the voice sings.' }),
    audio_start_seconds: z.number().min(0).meta({ description: 'Where the part a video would sing begins in the audio (0 unless the audio is longer than 30 s).' }),
    duration_seconds: z.number().positive().meta({ description: 'How long that part lasts: the video lasts as long.' }),
    warning: z.string().nullable().meta({ description: 'What to show before paying; null when a voice was found.', example: NO_VOICE_WARNING }),
  })
  .meta({ id: 'AudioCheck' });
