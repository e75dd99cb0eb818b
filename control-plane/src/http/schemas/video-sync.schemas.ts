import { z } from 'zod';

/** A finished video's sync report, as answered in every video record (ApiVideo, WebVideo, MCP results, webhook events). */
export const VideoSyncField = z
  .object({
    vocals_found: z.boolean().meta({
      description: 'Whether the audio holds a singing (or speaking) voice. False: the pet keeps its mouth at rest and only the head keeps time.',
    }),
    mouth_voice_r: z.number().min(-1).max(1).nullable().meta({
      description: 'Pearson r between the mouth\'s opening and the voice\'s loudness, frame by frame (1 follows it exactly); null when no voice was found.',
    }),
    instrumental_rest_share: z.number().min(0).max(1).nullable().meta({
      description: 'Of the frames where only the band plays, the share with the mouth at rest; null when the band never plays alone (or the audio is a voice alone).',
    }),
    audio_start_seconds: z.number().min(0).meta({
      description: 'Where in the source audio the video\'s soundtrack begins, in seconds (0 unless the source is longer than a video may last).',
    }),
    audio_duration_seconds: z.number().positive().meta({ description: 'How long the soundtrack the video sings lasts, in seconds.' }),
  })
  .nullable()
  .meta({
    id: 'VideoSync',
    description: 'How the pet sang along (added field): recorded when the render completes; null until then (and for videos rendered before the report existed).',
  });
