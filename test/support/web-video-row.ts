import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../../control-plane/src/db/database.ts';

/**
 * A web video of `userId` inserted directly (no render is needed): finished and watermarked unless said
 * otherwise, its objects named but not stored. Returns its id.
 */
export async function insertWebVideo(
  db: DatabaseHandle['db'],
  userId: string,
  values: { has_watermark?: boolean; status?: 'pending' | 'completed' } = {},
): Promise<string> {
  const id = randomUUID();
  const status = values.status ?? 'completed';
  await db
    .insertInto('videos')
    .values({
      id,
      user_id: userId,
      origin: 'web',
      payment: 'free_credit',
      status,
      has_watermark: values.has_watermark ?? true,
      template_id: null,
      image_key: `videos/${id}/image.png`,
      audio_key: `videos/${id}/audio.mp3`,
      output_key: status === 'completed' ? `videos/${id}/output.mp4` : null,
      completed_at: status === 'completed' ? new Date() : null,
    })
    .execute();
  return id;
}
