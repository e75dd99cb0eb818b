import { z } from 'zod';
import { MAX_SPEECH_CHARACTERS } from '@petsing/workflows/api-rules';

/**
 * POST /tts and GET /tts/voices (field names are ours: the spec leaves them open; see docs/web-app.md).
 * The request is parsed loosely on purpose: SpeechService checks length and voice, answering the
 * specific codes text_too_long and unknown_voice; the limits below document them.
 */
export const SpeechRequest = z
  .object({
    text: z.string().meta({
      description: `The words to speak: at most ${MAX_SPEECH_CHARACTERS} characters (about 30 seconds), trimmed; not empty.`,
      minLength: 1,
      maxLength: MAX_SPEECH_CHARACTERS,
      example: 'Happy birthday, Max! You are the best dog in the world.',
    }),
    voice_id: z.string().meta({ description: 'An `id` from GET /tts/voices.', example: 'en-us-female' }),
  })
  .meta({ id: 'SpeechRequest' });

export const SpeechResult = z
  .object({
    audio_url: z.url().meta({ description: 'Hosted MP3 of the speech; pass it as `audio_url` to POST /create-with-audio (the caller’s own only).' }),
    duration_seconds: z.number().min(2).max(30).meta({ description: 'Length of the audio: at least 2 s (padded with silence), under 30 s.' }),
    voice_id: z.string(),
  })
  .meta({ id: 'SpeechResult' });

export const Voice = z
  .object({
    id: z.string().meta({ description: 'Send as `voice_id` to POST /tts or POST /v1/audio.', example: 'en-us-female' }),
    name: z.string().meta({ description: 'Display name.', example: 'Ava (American English)' }),
    language: z.string().meta({ description: 'BCP 47 language tag the voice speaks; `mul` for a multilingual voice.', example: 'en-US' }),
    sample_url: z.url().meta({ description: 'Hosted MP3 sample clip of the voice (no credential needed).' }),
  })
  .meta({ id: 'Voice' });

export const VoiceList = z.object({ voices: z.array(Voice).meta({ description: 'Every voice POST /tts accepts.' }) }).meta({ id: 'VoiceList' });
