import { z } from 'zod';
import { MAX_SOURCE_AUDIO_SECONDS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { MAX_URL_LENGTH } from '../../media/host-vetting.ts';

/** POST /social/extract-audio (field names are ours: the spec leaves them open; see docs/web-app.md). */

export const ExtractAudioRequest = z
  .object({
    url: z.string().min(1).max(MAX_URL_LENGTH).meta({
      description: 'Link to a public TikTok video (https://www.tiktok.com/@user/video/…, or a vm.tiktok.com / vt.tiktok.com share link).',
      example: 'https://www.tiktok.com/@user/video/7301234567890123456',
    }),
  })
  .meta({ id: 'ExtractAudioRequest' });

export const ExtractedAudio = z
  .object({
    audio_url: z.url().meta({ description: 'The stored soundtrack (MP3, public link); pass it as `audio_url` to POST /create-with-audio.' }),
    duration_seconds: z.number().min(MIN_AUDIO_SECONDS).max(MAX_SOURCE_AUDIO_SECONDS).meta({ description: 'Length of the stored soundtrack: the video\'s sound, up to 180 seconds. A video sings at most 30 s of it: the 30 s with the most singing, unless audio_start_seconds says where.' }),
    source_url: z.url().meta({ description: 'The video link the soundtrack came from, normalized.' }),
    title: z.string().nullable().meta({ description: 'The video\'s title or caption, when the platform gives one.' }),
  })
  .meta({ id: 'ExtractedAudio' });

export type ExtractedAudioBody = z.infer<typeof ExtractedAudio>;
